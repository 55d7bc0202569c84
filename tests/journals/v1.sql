-- tests/journals/v1.sql -- a journal of schema version 1 (gauntlet before the overload verdict),
-- from a one-cell testbed sweep: tests/integration/journal-upgrade.sh opens it with today's gauntlet.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  started_wall INTEGER NOT NULL,          -- microseconds since the epoch
  ended_wall INTEGER,
  how TEXT,                               -- finished | interrupted | failed; NULL: running or killed
  version TEXT NOT NULL,                  -- gauntlet's
  matrix_path TEXT, matrix_text TEXT,
  engine TEXT NOT NULL, model TEXT, objective TEXT,
  bind_host TEXT, port INTEGER NOT NULL DEFAULT 0, workdir TEXT,
  startup_timeout_us INTEGER NOT NULL DEFAULT 0,
  axes TEXT NOT NULL DEFAULT '[]',        -- JSON array of axis names, in order
  host_json TEXT NOT NULL DEFAULT '{}',
  cwd TEXT,
  owner_pid INTEGER, owner_starttime INTEGER  -- the gauntlet running it
);
INSERT INTO sweeps VALUES(1,1796133682643785,1796133683170637,'finished','0.1.0','m.yaml',replace('engine: testbed\nargs: [--threads, "1"]\nstartup_timeout: 20s\nrequest_timeout: 30s\nstop_timeout: 5s\naxes:\n  queue:\n    values:\n      - {name: unbounded}\nchecks: default\nbench: {concurrency: [1, 4], input_tokens: 8, output_tokens: 16, requests: 8}\nobjective: output_tokens_per_s@4\nemit: []\n','\n',char(10)),'testbed',NULL,'output_tokens_per_s@4','127.0.0.1',0,NULL,20000000,'["queue"]','{}','/tmp/v1',NULL,NULL);
CREATE TABLE cells (
  id TEXT PRIMARY KEY,                    -- 16 hex digits (matrix.h)
  argv TEXT NOT NULL,                     -- JSON array, {host}/{port} kept
  env TEXT NOT NULL,                      -- JSON array of "KEY=VALUE", real values
  first_sweep INTEGER NOT NULL REFERENCES sweeps(id)
);
INSERT INTO cells VALUES('85d1e9d0c14cd30c','["gauntlet-testbed","--host","{host}","--port","{port}","--threads","1"]','[]',1);
CREATE TABLE sweep_cells (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  cell_id TEXT NOT NULL REFERENCES cells(id),
  position INTEGER NOT NULL,
  axes TEXT NOT NULL,                     -- JSON object {axis: value name}
  distance INTEGER NOT NULL,
  excluded INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, cell_id)
);
INSERT INTO sweep_cells VALUES(1,'85d1e9d0c14cd30c',0,'{"queue":"unbounded"}',1,0);
CREATE TABLE attempts (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  cell_id TEXT NOT NULL REFERENCES cells(id),
  state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'settled', 'abandoned')),
  started_wall INTEGER NOT NULL, ended_wall INTEGER,
  port INTEGER, log_path TEXT,
  verdict TEXT CHECK (verdict IN ('pass', 'garbage', 'wrong', 'crash', 'timeout', 'skipped', 'error')),
  cause TEXT, evidence TEXT, abandon_reason TEXT,
  launch_us INTEGER, ready_us INTEGER, checks_us INTEGER, bench_us INTEGER, stop_us INTEGER,
  ready_after_us INTEGER, exit_code INTEGER, exit_signal INTEGER, peak_gpu_mem_mib INTEGER,
  bench TEXT                              -- JSON array, one object per concurrency
);
INSERT INTO attempts VALUES(1,1,'85d1e9d0c14cd30c','settled',1796133682644098,1796133683170136,35783,'v1/85d1e9d0c14cd30c.log','pass',NULL,NULL,NULL,335,46302,95551,377298,5946,46363,-1,0,0,'[{"concurrency":1,"output_tokens_per_s":839.939,"requests":8,"completed":8,"failed":0,"aborted":0,"resent":0,"events_after_done":0,"errors":{},"duration_s":0.152,"output_tokens":128,"prompt_tokens":321,"total_tokens_per_s":2946.349,"requests_per_s":52.496,"tokens_per_chunk":1.0,"ttft_ms":{"p50":12.483,"p90":17.879,"p99":17.879,"p999":17.879,"mean":13.68,"min":11.763,"max":17.88,"count":8},"itl_ms":{"p50":0.351,"p90":0.466,"p99":0.514,"p999":0.526,"mean":0.351,"min":0.011,"max":0.526,"count":120},"tpot_ms":{"p50":0.337,"p90":0.454,"p99":0.454,"p999":0.454,"mean":0.352,"min":0.333,"max":0.454,"count":8},"e2e_ms":{"p50":17.575,"p90":24.695,"p99":24.695,"p999":24.695,"mean":18.961,"min":16.788,"max":24.702,"count":8},"send_delay_ms":{"p50":0.07,"p90":0.128,"p99":0.128,"p999":0.128,"mean":0.075,"min":0.057,"max":0.128,"count":8},"chunks":128,"send_rate_per_s":51.621,"client_cpu":{"user_s":0.004,"sys_s":0.004,"wall_s":0.192,"cores":0.039,"events":200,"events_per_cpu_s":26364.355,"reads":163,"events_per_read":1.227,"rss_kb_start":12420,"rss_kb_peak":12348},"warnings":[]},{"concurrency":4,"output_tokens_per_s":695.539,"requests":8,"completed":8,"failed":0,"aborted":0,"resent":0,"events_after_done":0,"errors":{},"duration_s":0.184,"output_tokens":128,"prompt_tokens":320,"total_tokens_per_s":2434.386,"requests_per_s":43.471,"tokens_per_chunk":1.0,"ttft_ms":{"p50":32.231,"p90":157.1,"p99":157.1,"p999":157.1,"mean":65.328,"min":13.302,"max":157.1,"count":8},"itl_ms":{"p50":0.374,"p90":0.47,"p99":0.568,"p999":1.788,"mean":0.378,"min":0.013,"max":1.788,"count":120},"tpot_ms":{"p50":0.356,"p90":0.473,"p99":0.473,"p999":0.473,"mean":0.379,"min":0.333,"max":0.473,"count":8},"e2e_ms":{"p50":37.455,"p90":163.391,"p99":163.391,"p999":163.391,"mean":71.026,"min":18.821,"max":163.452,"count":8},"send_delay_ms":{"p50":0.061,"p90":0.279,"p99":0.279,"p999":0.279,"mean":0.114,"min":0.046,"max":0.279,"count":8},"chunks":128,"send_rate_per_s":64.078,"client_cpu":{"user_s":0.005,"sys_s":0.001,"wall_s":0.184,"cores":0.033,"events":200,"events_per_cpu_s":33178.5,"reads":168,"events_per_read":1.19,"rss_kb_start":13064,"rss_kb_peak":12988},"warnings":[]}]');
CREATE TABLE processes (
  id INTEGER PRIMARY KEY,
  attempt_id INTEGER NOT NULL REFERENCES attempts(id),
  pid INTEGER NOT NULL, starttime INTEGER NOT NULL,  -- clock ticks since boot
  token TEXT
);
INSERT INTO processes VALUES(1,1,0,0,'bafbda8c3f0f080e85948854423d7a2e');
INSERT INTO processes VALUES(2,1,17100,1302484,'bafbda8c3f0f080e85948854423d7a2e');
CREATE TABLE check_results (
  attempt_id INTEGER NOT NULL REFERENCES attempts(id),
  seq INTEGER NOT NULL,
  name TEXT NOT NULL, verdict TEXT NOT NULL, cause TEXT, evidence TEXT,
  output TEXT, reasoning TEXT, finish_reason TEXT, http_status INTEGER,
  latency_us INTEGER, ttft_us INTEGER, streamed INTEGER NOT NULL,
  PRIMARY KEY (attempt_id, seq)
);
INSERT INTO check_results VALUES(1,0,'models','pass',NULL,NULL,'gauntlet-testbed-moe',NULL,NULL,200,287,0,0);
INSERT INTO check_results VALUES(1,1,'ok','pass',NULL,NULL,'OK',NULL,'stop',200,17350,0,0);
INSERT INTO check_results VALUES(1,2,'ok/stream','pass',NULL,NULL,'OK',NULL,'stop',200,10342,9980,1);
INSERT INTO check_results VALUES(1,3,'math','pass',NULL,NULL,'323',NULL,'stop',200,9924,0,0);
INSERT INTO check_results VALUES(1,4,'math/stream','pass',NULL,NULL,'323',NULL,'stop',200,8736,8005,1);
INSERT INTO check_results VALUES(1,5,'math-thinking','pass',NULL,NULL,'323','17 * 19 = 17 * 10 + 17 * 9 = 170 + 153 = 323','stop',200,22746,0,0);
INSERT INTO check_results VALUES(1,6,'math-thinking/stream','pass',NULL,NULL,'323','17 * 19 = 17 * 10 + 17 * 9 = 170 + 153 = 323','stop',200,25668,7761,1);
CREATE TABLE bench_samples (
  attempt_id INTEGER NOT NULL REFERENCES attempts(id),
  seq INTEGER NOT NULL,
  sample TEXT NOT NULL,                   -- JSON object, one request
  PRIMARY KEY (attempt_id, seq)
);
INSERT INTO bench_samples VALUES(1,0,'{"concurrency":1,"index":0,"ok":true,"scheduled_ms":39.673,"send_delay_ms":0.07,"e2e_ms":20.826,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":15.728,"tpot_ms":0.339,"request_id":"gauntlet-f8f630f0-2"}');
INSERT INTO bench_samples VALUES(1,1,'{"concurrency":1,"index":1,"ok":true,"scheduled_ms":60.615,"send_delay_ms":0.071,"e2e_ms":17.573,"chunks":16,"output_tokens":16,"prompt_tokens":38,"ttft_ms":12.487,"tpot_ms":0.339,"request_id":"gauntlet-f8f630f0-3"}');
INSERT INTO bench_samples VALUES(1,2,'{"concurrency":1,"index":2,"ok":true,"scheduled_ms":78.274,"send_delay_ms":0.063,"e2e_ms":17.476,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":12.374,"tpot_ms":0.34,"request_id":"gauntlet-f8f630f0-4"}');
INSERT INTO bench_samples VALUES(1,3,'{"concurrency":1,"index":3,"ok":true,"scheduled_ms":95.83,"send_delay_ms":0.07,"e2e_ms":17.339,"chunks":16,"output_tokens":16,"prompt_tokens":36,"ttft_ms":12.295,"tpot_ms":0.336,"request_id":"gauntlet-f8f630f0-5"}');
INSERT INTO bench_samples VALUES(1,4,'{"concurrency":1,"index":4,"ok":true,"scheduled_ms":113.255,"send_delay_ms":0.128,"e2e_ms":24.702,"chunks":16,"output_tokens":16,"prompt_tokens":46,"ttft_ms":17.88,"tpot_ms":0.454,"request_id":"gauntlet-f8f630f0-6"}');
INSERT INTO bench_samples VALUES(1,5,'{"concurrency":1,"index":5,"ok":true,"scheduled_ms":138.132,"send_delay_ms":0.057,"e2e_ms":18.899,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":13.89,"tpot_ms":0.333,"request_id":"gauntlet-f8f630f0-7"}');
INSERT INTO bench_samples VALUES(1,6,'{"concurrency":1,"index":6,"ok":true,"scheduled_ms":157.104,"send_delay_ms":0.061,"e2e_ms":18.083,"chunks":16,"output_tokens":16,"prompt_tokens":42,"ttft_ms":13.019,"tpot_ms":0.337,"request_id":"gauntlet-f8f630f0-8"}');
INSERT INTO bench_samples VALUES(1,7,'{"concurrency":1,"index":7,"ok":true,"scheduled_ms":175.264,"send_delay_ms":0.083,"e2e_ms":16.788,"chunks":16,"output_tokens":16,"prompt_tokens":39,"ttft_ms":11.763,"tpot_ms":0.335,"request_id":"gauntlet-f8f630f0-9"}');
INSERT INTO bench_samples VALUES(1,8,'{"concurrency":4,"index":0,"ok":true,"scheduled_ms":0.034,"send_delay_ms":0.261,"e2e_ms":53.741,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":48.69,"tpot_ms":0.336,"request_id":"gauntlet-f8f630f0-12"}');
INSERT INTO bench_samples VALUES(1,9,'{"concurrency":4,"index":3,"ok":true,"scheduled_ms":35.791,"send_delay_ms":0.05,"e2e_ms":37.378,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":32.239,"tpot_ms":0.342,"request_id":"gauntlet-f8f630f0-15"}');
INSERT INTO bench_samples VALUES(1,10,'{"concurrency":4,"index":4,"ok":true,"scheduled_ms":54.078,"send_delay_ms":0.048,"e2e_ms":37.459,"chunks":16,"output_tokens":16,"prompt_tokens":38,"ttft_ms":31.372,"tpot_ms":0.405,"request_id":"gauntlet-f8f630f0-16"}');
INSERT INTO bench_samples VALUES(1,11,'{"concurrency":4,"index":5,"ok":true,"scheduled_ms":73.253,"send_delay_ms":0.061,"e2e_ms":36.145,"chunks":16,"output_tokens":16,"prompt_tokens":36,"ttft_ms":30.805,"tpot_ms":0.356,"request_id":"gauntlet-f8f630f0-17"}');
INSERT INTO bench_samples VALUES(1,12,'{"concurrency":4,"index":7,"ok":true,"scheduled_ms":109.491,"send_delay_ms":0.046,"e2e_ms":18.821,"chunks":16,"output_tokens":16,"prompt_tokens":44,"ttft_ms":13.302,"tpot_ms":0.367,"request_id":"gauntlet-f8f630f0-19"}');
INSERT INTO bench_samples VALUES(1,13,'{"concurrency":4,"index":1,"ok":true,"scheduled_ms":0.042,"send_delay_ms":0.279,"e2e_ms":148.333,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":141.235,"tpot_ms":0.473,"request_id":"gauntlet-f8f630f0-13"}');
INSERT INTO bench_samples VALUES(1,14,'{"concurrency":4,"index":6,"ok":true,"scheduled_ms":91.602,"send_delay_ms":0.066,"e2e_ms":72.882,"chunks":16,"output_tokens":16,"prompt_tokens":40,"ttft_ms":67.878,"tpot_ms":0.333,"request_id":"gauntlet-f8f630f0-18"}');
INSERT INTO bench_samples VALUES(1,15,'{"concurrency":4,"index":2,"ok":true,"scheduled_ms":20.772,"send_delay_ms":0.101,"e2e_ms":163.452,"chunks":16,"output_tokens":16,"prompt_tokens":42,"ttft_ms":157.1,"tpot_ms":0.423,"request_id":"gauntlet-f8f630f0-14"}');
CREATE INDEX attempts_by_cell ON attempts (cell_id, state, id);
CREATE INDEX processes_by_attempt ON processes (attempt_id);
COMMIT;
PRAGMA application_id=1196706900;
PRAGMA user_version=1;
