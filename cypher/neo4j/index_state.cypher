// Every index NeoRAG made (not the built-in token lookup indexes) with its state and vector dimension. Params: none.
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, options
WHERE type <> 'LOOKUP'
RETURN name, type, entityType AS entity_type, labelsOrTypes[0] AS label, properties[0] AS property,
       state, options.indexConfig['vector.dimensions'] AS dimension
