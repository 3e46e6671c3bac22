-- A staff sign-in whose password was generated — by an admin, the CLI, or a reset — chooses its own
-- at the next sign-in: until then the operator API refuses it (403 AUTH_006) and the console shows
-- only the "choose a new password" step. Sign-ins that exist keep their passwords as they are.
ALTER TABLE users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;
