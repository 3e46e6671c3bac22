-- Phone messages that wait for a person (issue 33): the executor's cabinet lists and counts its
-- own (a badge that refreshes every few seconds), and the console's dashboard counts them all.
-- An unmatched message (its notification kept for a person) waits too: it is linked or set aside
-- like the others, which the index of ambiguous and unreadable ones (031) leaves out.
CREATE INDEX device_messages_for_people ON device_messages (executor_id, created_at DESC)
  WHERE status IN ('unmatched', 'ambiguous', 'unreadable');
