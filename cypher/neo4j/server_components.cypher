// The server's name, version and edition (diagnostics). Params: none.
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
