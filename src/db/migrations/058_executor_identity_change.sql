-- kassir:locks SHARE ROW EXCLUSIVE: executors
--
-- The executor API's callers kept in memory as the merchant API's are (issue 38: one round trip
-- less on every executor request, a reported transfer's among them): an executor's token is
-- looked up in the same IdentityCache, whose entries every instance forgets on an announcement
-- on `kassir_identity` (migration 011). What an executor's identity holds — its token, name and
-- activity — is announced when it changes, by any writer (the operator API, the CLI, plain SQL),
-- at COMMIT. Only those columns: executors' rows are also written by the scores', deposits' and
-- devices' jobs and by disputes every few seconds, and an announcement of those would empty the
-- cache of every instance each time. A new executor's token needs none (a token not found is not
-- kept); a deleted executor's does.
CREATE TRIGGER executors_identity_change AFTER UPDATE OF token_hash, name, is_active ON executors
  FOR EACH ROW WHEN (OLD.token_hash IS DISTINCT FROM NEW.token_hash OR OLD.name IS DISTINCT FROM NEW.name OR OLD.is_active IS DISTINCT FROM NEW.is_active)
  EXECUTE FUNCTION notify_identity_change();
CREATE TRIGGER executors_identity_delete AFTER DELETE ON executors
  FOR EACH ROW EXECUTE FUNCTION notify_identity_change();
CREATE TRIGGER executors_identity_truncate AFTER TRUNCATE ON executors
  FOR EACH STATEMENT EXECUTE FUNCTION notify_identity_change();
