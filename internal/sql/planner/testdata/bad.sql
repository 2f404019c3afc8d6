SET 'table.exec.state.ttl' = '1h';
SET 'parallelism.default' = 'two';
CREATE TABLE s (
  a BIGINT,
  b VARCHAR,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'avro');
CREATE TABLE o (a BIGINT, n BIGINT) WITH ('connector' = 'print', 'print-identifer' = 'x');
CREATE TABLE f (a BIGINT) WITH ('connector' = 'jdbc');
INSERT INTO o SELECT a, COUNT(*) FROM s GROUP BY a;
INSERT INTO o SELECT a, COUNT(*) FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(b), INTERVAL '1' MINUTE)) GROUP BY a, window_start, window_end;
INSERT INTO o SELECT aa, UPPERR(b) FROM s;
INSERT INTO o SELECT b, COUNT(*) FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY a, window_start, window_end;
INSERT INTO o SELECT a FROM s;
INSERT INTO oo SELECT a, a FROM s;
INSERT INTO o SELECT a, COUNT(*) FROM s GROUP BY a, TUMBLE(b, INTERVAL '1' MINUTE);
INSERT INTO o SELECT a, TUMBLE_START(ts, INTERVAL '1' MINUTE) FROM s;
INSERT INTO o SELECT a, COUNT(*) FROM TABLE(SESSION(TABLE s PARTITION BY b, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY a, window_start, window_end;
