// Every index with its state and vector dimension, one row per property and type. Params: none.
CALL db.indexes() YIELD label, properties, types, options, status, entitytype
UNWIND properties AS property
UNWIND types[property] AS type
RETURN label + '.' + property + ':' + type AS name, type, entitytype AS entity_type, label, property,
       status AS state, CASE WHEN type = 'VECTOR' THEN options[property].dimension ELSE null END AS dimension
