CREATE TABLE n (event_type INT, bid ROW<auction BIGINT, price BIGINT>)
  WITH ('connector' = 'nexmark', 'events.num' = '-5', 'bid.proportion' = 'x');
CREATE TABLE o (a BIGINT, p VARCHAR) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
INSERT INTO o SELECT bid.auction, bid.price FROM n WHERE event_type = 2;
INSERT INTO o SELECT bid.auction bid.price FROM n;
INSERT INTO o SELECT bid.auctio, 'x' FROM n;
END;
