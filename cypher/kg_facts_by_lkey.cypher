// Fact nodes by folded key (<sample key>|<trimmed lower-case name>); several may match. Params: $keys [string].
UNWIND $keys AS k
MATCH (f:KGFacts {lkey: k})
RETURN k AS lkey, f.name AS name, f.out_rel AS out_rel, f.out_ent AS out_ent, f.in_rel AS in_rel, f.in_ent AS in_ent
