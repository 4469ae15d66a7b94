-- Folders hold notes; a note belongs to exactly one folder.
CREATE TABLE folder (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE note (
    id        INTEGER PRIMARY KEY,
    folder_id INTEGER NOT NULL REFERENCES folder(id) ON DELETE CASCADE,
    title     TEXT NOT NULL,
    body      TEXT,
    created   TEXT NOT NULL
);
