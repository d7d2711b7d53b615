// Entities whose normalised key equals one of the question's n-gram keys. Params: $keys [string].
UNWIND $keys AS k
MATCH (e:Entity {norm: k})
RETURN e.id AS id, e.name AS name, e.freq AS freq, k AS key
