// :param entity => 'rhine'
// An entity's 2-hop neighbourhood: chunks mentioning it and co-occurring entities, or KG_REL edges for a KG entity (null entity: the entity most chunks mention, else the KG entity with the most edges).
:param entity => null;
CALL () {
  MATCH (e:Entity)
  WHERE $entity IS NULL OR e.id = $entity OR e.name = $entity
  RETURN e, 0 AS kind, coalesce(e.freq, 0) AS degree
  UNION
  MATCH (e:KGEntity)
  WHERE $entity IS NULL OR e.name = $entity OR e.key = $entity
  RETURN e, 1 AS kind, COUNT { (e)-[:KG_REL]-() } AS degree
}
WITH e ORDER BY kind, degree DESC, elementId(e)
LIMIT 1
MATCH p = (e)-[:MENTIONS|CO_OCCURS|KG_REL]-{1,2}(x)
RETURN p
LIMIT 200
