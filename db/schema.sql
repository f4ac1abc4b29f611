-- nanobench run store (SQLite): every estimate, calibration, compile, run and compare.
--
-- This file is the schema and its history at once: the blocks below are the forward
-- migrations, applied in order by db/store.c (the file is compiled into the binary).
-- PRAGMA user_version holds the number of the last migration applied; a database whose
-- version is above the newest block here comes from a newer nanobench and is refused
-- without being altered. Never edit a block that has shipped: add a new one.
--
-- Conventions: times are UTC, ISO 8601 with milliseconds ('2026-11-30T23:01:05.123Z'), so
-- that they sort as text; JSON columns hold UTF-8 JSON text; hashes are lowercase hex
-- SHA-256 of the file's bytes; sizes are bytes.

-- @migration 1: models, runs, metrics, per-layer results, artifacts
CREATE TABLE models (
    id       INTEGER PRIMARY KEY,
    path     TEXT NOT NULL,            -- absolute path when first recorded
    sha256   TEXT NOT NULL,            -- of the .onnx file
    bytes    INTEGER NOT NULL,
    opset    INTEGER,                  -- default-domain opset; NULL until a run loaded it
    inputs   TEXT,                     -- JSON [{"name", "dtype", "shape": [n | "sym"]}]
    outputs  TEXT,                     -- JSON, as inputs
    UNIQUE (path, sha256)
);

CREATE TABLE runs (
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('info', 'infer', 'estimate', 'calibrate',
                                             'compile', 'run', 'compare', 'bringup')),
    model_id   INTEGER REFERENCES models(id),
    parent_id  INTEGER REFERENCES runs(id) ON DELETE SET NULL,  -- compile -> calibrate ...
    params     TEXT NOT NULL DEFAULT '{}', -- JSON: {"argv": [...], and the parsed options}
    started    TEXT NOT NULL,
    finished   TEXT,
    wall_ms    REAL,
    status     TEXT NOT NULL CHECK (status IN ('running', 'ok', 'error')),
    error      TEXT,                   -- the one-line message when status = 'error'
    version    TEXT NOT NULL           -- nanobench version that recorded the run
);
CREATE INDEX runs_started ON runs(started);
CREATE INDEX runs_model ON runs(model_id);
CREATE INDEX runs_parent ON runs(parent_id);

CREATE TABLE metrics (                  -- TOTAL_MEM_SIZE, exeom bytes, cycles, min cosine ...
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    value   REAL,                       -- NULL for NaN
    unit    TEXT NOT NULL DEFAULT '',   -- 'B', 'ms', 'cycles', '' for ratios
    PRIMARY KEY (run_id, name)
);

CREATE TABLE layer_results (            -- one row per layer of a compare or calibration
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,          -- order in the run's report
    layer    TEXT NOT NULL,
    op_type  TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, seq)
);
CREATE INDEX layer_results_layer ON layer_results(run_id, layer);

CREATE TABLE layer_metrics (            -- cosine similarity, max abs error, scale ...
    layer_result_id  INTEGER NOT NULL REFERENCES layer_results(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    value            REAL,
    PRIMARY KEY (layer_result_id, name)
);

CREATE TABLE artifacts (                -- files a run read or wrote; never deleted by rm
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    role    TEXT NOT NULL,              -- 'output', 'dump', 'manifest', 'exeom', 'record' ...
    path    TEXT NOT NULL,
    sha256  TEXT,
    bytes   INTEGER
);
CREATE INDEX artifacts_run ON artifacts(run_id);

-- @migration 2: the recording process, so that a run left 'running' by a killed process
-- shows as crashed ('crashed' is derived when reading: same host, process gone)
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN pid INTEGER;
