// Fact nodes by exact key (<sample key>|<name>). Params: $keys [string].
UNWIND $keys AS k
MATCH (f:KGFacts {key: k})
RETURN k AS key, f.name AS name, f.out_rel AS out_rel, f.out_ent AS out_ent, f.in_rel AS in_rel, f.in_ent AS in_ent
