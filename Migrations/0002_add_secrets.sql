-- Secrets (API tokens, recovery codes) attached to a note.
CREATE TABLE secret (
    id      INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL REFERENCES note(id) ON DELETE CASCADE,
    label   TEXT NOT NULL,
    value   BLOB NOT NULL
);
