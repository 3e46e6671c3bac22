-- The cascade takes the least recently used fitting requisite: ORDER BY last_used_at NULLS FIRST,
-- id. With id in the index the order is the index's, so a create walks the pool from its least
-- recently used end and stops at the first requisite that fits, instead of sorting the pool (or,
-- with only last_used_at indexed, every never-used requisite) on every create.
DROP INDEX requisites_pool;
CREATE INDEX requisites_pool ON requisites (currency, type, last_used_at NULLS FIRST, id) WHERE is_active;
