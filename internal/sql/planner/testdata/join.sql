CREATE TABLE orders (id BIGINT, customer BIGINT, amount DOUBLE, placed TIMESTAMP(3), due TIMESTAMP(3),
  WATERMARK FOR placed AS placed - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');
CREATE TABLE payments (order_id BIGINT, amount DOUBLE, paid TIMESTAMP(3),
  WATERMARK FOR paid AS paid - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'payments', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');
CREATE TABLE o (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');
CREATE VIEW per_minute AS SELECT customer, COUNT(*) AS n, window_start, window_end
  FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(placed), INTERVAL '1' MINUTE)) GROUP BY customer, window_start, window_end;
CREATE VIEW per_hour AS SELECT order_id, COUNT(*) AS n, window_start, window_end
  FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(paid), INTERVAL '1' HOUR)) GROUP BY order_id, window_start, window_end;
-- no equality between the inputs
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON P.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR;
-- a BETWEEN on a TIMESTAMP that is not a time attribute (due)
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON O.id = P.order_id AND P.paid BETWEEN O.placed AND O.due;
-- a regular join: no time bound at all
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON O.id = P.order_id WHERE P.amount > 10;
-- one bound only
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON O.id = P.order_id AND P.paid >= O.placed;
-- bounds that leave nothing
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON O.id = P.order_id AND P.paid BETWEEN O.placed + INTERVAL '2' SECOND AND O.placed;
-- an unqualified name both inputs have, and an unknown qualifier
INSERT INTO o SELECT id, amount FROM orders O JOIN payments P ON O.id = P.order_id AND Q.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR;
-- a window join missing the window_end equality, and one of different windows
INSERT INTO o SELECT M.customer, M.n FROM per_minute M JOIN per_minute M2 ON M.customer = M2.customer AND M.window_start = M2.window_start;
INSERT INTO o SELECT M.customer, H.n FROM per_minute M JOIN per_hour H ON M.customer = H.order_id AND M.window_start = H.window_start AND M.window_end = H.window_end;
-- a RIGHT interval join, a WHERE over the NULL side of a LEFT join, a third input, an aggregation over a join
INSERT INTO o SELECT O.id, P.amount FROM orders O RIGHT JOIN payments P ON O.id = P.order_id AND P.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR;
INSERT INTO o SELECT O.id, P.amount FROM orders O LEFT JOIN payments P ON O.id = P.order_id AND P.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR WHERE P.amount > 10 AND O.amount > 10;
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON O.id = P.order_id JOIN payments P2 ON P.order_id = P2.order_id;
INSERT INTO o SELECT O.id, SUM(P.amount) FROM orders O JOIN payments P ON O.id = P.order_id AND P.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR GROUP BY O.id;
-- a key of text equal to one of numbers
INSERT INTO o SELECT O.id, P.amount FROM orders O JOIN payments P ON CAST(O.id AS VARCHAR) = P.order_id AND P.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR;
-- t.* of no input
INSERT INTO o SELECT Q.* FROM orders O JOIN payments P ON O.id = P.order_id AND P.paid BETWEEN O.placed AND O.placed + INTERVAL '1' HOUR;
-- window table functions' rows: joined to an aggregation, joined without the window equalities, inserted as they are
INSERT INTO o SELECT M.customer, M.n FROM per_minute M JOIN (SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(placed), INTERVAL '1' MINUTE))) T ON M.customer = T.customer AND M.window_start = T.window_start AND M.window_end = T.window_end;
INSERT INTO o SELECT T.id, P.amount FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(placed), INTERVAL '1' MINUTE)) T JOIN payments P ON T.id = P.order_id AND P.paid BETWEEN T.placed AND T.placed + INTERVAL '1' HOUR;
INSERT INTO o SELECT id, amount FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(placed), INTERVAL '1' MINUTE));
