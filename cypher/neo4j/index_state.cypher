// Every index with its state and vector dimension. Params: none.
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, options
RETURN name, type, entityType AS entity_type, labelsOrTypes[0] AS label, properties[0] AS property,
       state, options.indexConfig['vector.dimensions'] AS dimension
