// Range index on EntityRedirect.target (redirects follow a later merge of their target). Params: none.
CREATE INDEX FOR (r:EntityRedirect) ON (r.target)
