// Index on EntityRedirect.target (redirects follow a later merge of their target). Params: none.
CREATE INDEX entity_redirect_target IF NOT EXISTS FOR (r:EntityRedirect) ON (r.target)
