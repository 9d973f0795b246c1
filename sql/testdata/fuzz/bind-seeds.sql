SELECT 1 IN ()
----
SELECT 1 IN (2)
----
SELECT 1 IN (2,3,4,5,6,7,8,9)
----
SELECT 1 NOT IN ()
----
SELECT 1 NOT IN (2)
----
SELECT 1 NOT IN (2,3,4,5,6,7,8,9)
----
SELECT null IN ()
----
SELECT null NOT IN ()
----
CREATE TABLE t1(x INTEGER)
----
SELECT 1 IN t1
----
SELECT 1 IN (SELECT * FROM t1)
----
SELECT 1 NOT IN t1
----
SELECT 1 NOT IN (SELECT * FROM t1)
----
SELECT null IN t1
----
SELECT null IN (SELECT * FROM t1)
----
SELECT null NOT IN t1
----
SELECT null NOT IN (SELECT * FROM t1)
----
CREATE TABLE t2(y INTEGER PRIMARY KEY)
----
SELECT 1 IN t2
----
SELECT 1 IN (SELECT * FROM t2)
----
SELECT 1 NOT IN t2
----
SELECT 1 NOT IN (SELECT * FROM t2)
----
SELECT null IN t2
----
SELECT null IN (SELECT * FROM t2)
----
SELECT null NOT IN t2
----
SELECT null NOT IN (SELECT * FROM t2)
----
CREATE TABLE t3(z INTEGER UNIQUE)
----
SELECT 1 IN t3
----
SELECT 1 IN (SELECT * FROM t3)
----
SELECT 1 NOT IN t3
----
CREATE TABLE t1( x INTEGER, y TEXT )
----
CREATE TABLE t1( x INTEGER, y VARCHAR(8) )
----
INSERT INTO t1 VALUES(1,'true')
----
INSERT INTO t1 VALUES(0,'false')
----
INSERT INTO t1 VALUES(NULL,'NULL')
----
SELECT 1 FROM t1 WHERE 1 IN (2)
----
SELECT 1 FROM t1 WHERE 1.0 IN (2.0)
----
SELECT 1 FROM t1 WHERE '1' IN ('2')
----
SELECT 1 FROM t1 WHERE 1 NOT IN (2)
----
SELECT 1 FROM t1 WHERE 1.0 NOT IN (2.0)
----
SELECT 1 FROM t1 WHERE '1' NOT IN ('2')
----
SELECT 1 FROM t1 WHERE 1 IN ()
----
SELECT 1 FROM t1 WHERE 1.0 IN ()
----
SELECT 1 FROM t1 WHERE '1' IN ()
----
SELECT 1 FROM t1 WHERE NULL IN ()
----
SELECT 1 FROM t1 WHERE 1 NOT IN ()
----
SELECT 1 FROM t1 WHERE 1.0 NOT IN ()
----
SELECT 1 FROM t1 WHERE '1' NOT IN ()
----
SELECT 1 FROM t1 WHERE NULL NOT IN ()
----
SELECT 1 FROM t1 WHERE 1 IN ( NULL, 1 )
----
SELECT 1 FROM t1 WHERE 1.0 IN ( NULL, 1.0 )
----
SELECT 1 FROM t1 WHERE '1' IN ( NULL, '1' )
----
SELECT 1 FROM t1 WHERE 1 NOT IN ( NULL, 1 )
----
SELECT 1 FROM t1 WHERE 1.0 NOT IN ( NULL, 1.0 )
----
SELECT 1 FROM t1 WHERE '1' NOT IN ( NULL, '1' )
----
SELECT 1 FROM t1 WHERE 1 IN ( 1 )
----
SELECT 1 FROM t1 WHERE 1.0 IN ( 1.0 )
----
SELECT 1 FROM t1 WHERE '1' IN ( '1' )
----
SELECT 1 FROM t1 WHERE 1 NOT IN ( 1 )
----
SELECT 1 FROM t1 WHERE 1.0 NOT IN ( 1.0 )
----
CREATE INDEX t1i1 ON t1(x)
----
SELECT count(DISTINCT x) FROM t1
----
SELECT avg(DISTINCT x) FROM t1
----
SELECT sum(DISTINCT x) FROM t1
----
SELECT total(DISTINCT x) FROM t1
----
SELECT min(DISTINCT x) FROM t1
----
SELECT max(DISTINCT x) FROM t1
----
SELECT group_concat(DISTINCT x) FROM t1 NOT INDEXED
----
INSERT INTO t1 VALUES(2,'true')
----
SELECT avg(x) FROM t1
----
SELECT count(y) FROM t1
----
SELECT avg(y) FROM t1
----
SELECT sum(y) FROM t1
----
SELECT total(y) FROM t1
----
SELECT min(y) FROM t1
----
SELECT max(y) FROM t1
----
SELECT group_concat(y) FROM t1
----
SELECT count(DISTINCT y) FROM t1
----
SELECT avg(DISTINCT y) FROM t1
----
SELECT sum(DISTINCT y) FROM t1
----
SELECT total(DISTINCT y) FROM t1
----
SELECT min(DISTINCT y) FROM t1
----
SELECT max(DISTINCT y) FROM t1
----
SELECT group_concat(DISTINCT y) FROM t1
----
SELECT avg(x) FROM t1 WHERE y='null'
----
SELECT avg(DISTINCT x) FROM t1 WHERE y='null'
----
SELECT count(x) FROM t1 WHERE y='null'
----
SELECT count(DISTINCT x) FROM t1 WHERE y='null'
----
SELECT count(x) FROM t1 WHERE y='false'
----
SELECT count(DISTINCT x) FROM t1 WHERE y='false'
----
CREATE TRIGGER t1r1 UPDATE ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r2 DELETE ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r3 INSERT ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r4 UPDATE ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r5 AFTER DELETE ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r6 AFTER INSERT ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r7 AFTER UPDATE ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r8 BEFORE DELETE ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r9 BEFORE INSERT ON t1 BEGIN SELECT 1; END;
----
CREATE TRIGGER t1r10 BEFORE UPDATE ON t1 BEGIN SELECT 1; END;
----
DROP TRIGGER t1r1
----
DROP TRIGGER t1r2
----
DROP TRIGGER t1r3
----
DROP TRIGGER t1r4
----
DROP TRIGGER t1r5
----
DROP TRIGGER t1r6
----
DROP TRIGGER t1r7
----
DROP TRIGGER t1r8
----
DROP TRIGGER t1r9
----
DROP TRIGGER t1r10
----
CREATE VIEW view1 AS SELECT x FROM t1 WHERE x>0
----
SELECT x FROM t1 WHERE x>0
----
SELECT x FROM view1
----
CREATE TEMP VIEW view2 AS SELECT x FROM t1 WHERE x>0
----
CREATE TEMPORARY VIEW view3 AS SELECT x FROM t1 WHERE x>0
----
DELETE FROM view1 WHERE x>0
----
INSERT INTO view1 VALUES(2,'unknown')
----
UPDATE view1 SET x=2
----
INSERT OR REPLACE INTO view1 VALUES(2,'unknown')
----
DROP VIEW view1
----
DROP VIEW view2
----
DROP VIEW view3
----
DROP VIEW viewX
----
DROP INDEX t1i1;
----
DROP INDEX tXiX;
----
DROP TABLE t1
----
DROP TABLE tX
----
DROP TABLE IF EXISTS t1
----
DROP TRIGGER tXrX
----
CREATE VIEW view2 AS SELECT x FROM t1 WHERE x=0
----
SELECT x FROM view2
----
SELECT x FROM t1 WHERE x=0
----
REINDEX t1i1
----
REINDEX tXiX
----
CREATE TABLE t1( x INTEGER PRIMARY KEY, y VARCHAR(16) )
----
INSERT INTO t1 VALUES(1, 'true')
----
INSERT INTO t1 VALUES(0, 'false')
----
SELECT x, y FROM t1 WHERE x=2
----
INSERT INTO t1 VALUES(2, 'insert')
----
REPLACE INTO t1 VALUES(2, 'replace')
----
SELECT x, y FROM t1 WHERE x=3
----
REPLACE INTO t1 VALUES(4, 'replace (new)')
----
SELECT x, y FROM t1 WHERE x=4
----
UPDATE t1 SET x=1 WHERE x>0
----
UPDATE t1 SET x=2 WHERE x>0
----
UPDATE t1 SET y='true' WHERE x>0
----
UPDATE t1 SET y='unknown' WHERE x>0
----
UPDATE t1 SET z='foo'
----
UPDATE t1 SET z='foo' WHERE x>0
----
UPDATE t1 SET x=3
----
SELECT count(*) FROM t1 WHERE x=3
----
UPDATE t1 SET x=1 WHERE y='unknown'
----
SELECT count(*) FROM t1 WHERE x=1
----
UPDATE t1 SET x=1 WHERE y='foo'
----
UPDATE t1 SET x=3+1
----
SELECT count(*) FROM t1 WHERE x=4
----
UPDATE t1 SET x=3, x=4, x=5
----
SELECT count(*) FROM t1 WHERE x=5
----
SELECT count(*) FROM t1 WHERE y='unknown'
----
UPDATE t1 SET x=2
----
UPDATE t1 SET x=x+2
----
CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)
----
INSERT INTO tab0 VALUES(0,43,98.38,'cnejn',63,7.30,'smhrr')
----
INSERT INTO tab0 VALUES(1,100,7.54,'vessh',14,53.18,'xakwj')
----
INSERT INTO tab0 VALUES(2,26,33.95,'dmibq',100,39.1,'zegoz')
----
CREATE TABLE tab1(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)
----
CREATE INDEX idx_tab1_0 on tab1 (col0)
----
CREATE INDEX idx_tab1_1 on tab1 (col1)
----
CREATE INDEX idx_tab1_3 on tab1 (col3)
----
CREATE INDEX idx_tab1_4 on tab1 (col4)
----
CREATE TABLE tab2(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)
----
CREATE INDEX idx_tab2_0 ON tab2 (col0)
----
CREATE INDEX idx_tab2_1 ON tab2 (col3)
----
CREATE INDEX idx_tab2_5 ON tab2 (col1 DESC,col4)
----
CREATE TABLE tab3(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)
----
CREATE INDEX idx_tab3_0 ON tab3 (col0,col3 DESC)
----
CREATE INDEX idx_tab3_1 ON tab3 (col4 DESC)
----
CREATE UNIQUE INDEX idx_tab3_5 ON tab3 (col3)
----
CREATE TABLE tab4(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)
----
CREATE UNIQUE INDEX idx_tab4_0 ON tab4 (col0,col3 DESC,col4 DESC)
----
CREATE INDEX idx_tab4_1 ON tab4 (col3)
----
SELECT pk FROM tab0 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (col3 BETWEEN 25 AND 3) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab0 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (( col3 >= 25 AND col3 <= 3)) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab1 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (col3 BETWEEN 25 AND 3) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab1 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (( col3 >= 25 AND col3 <= 3)) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab2 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (col3 BETWEEN 25 AND 3) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab2 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (( col3 >= 25 AND col3 <= 3)) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab3 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (col3 BETWEEN 25 AND 3) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab3 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (( col3 >= 25 AND col3 <= 3)) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab4 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (col3 BETWEEN 25 AND 3) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
SELECT pk FROM tab4 WHERE ((((((col3 IN (44,24,63,44,60)) AND (col3 < 30 OR ((((col0 < 75 AND col1 < 39.22))) AND (( col3 >= 25 AND col3 <= 3)) AND col3 >= 35 AND col0 <= 8 AND (col0 IN (31,83,83,69)) AND (((col3 < 64)) OR (col0 > 4 AND (col0 < 43))) AND (col3 = 12 AND (col3 > 6) OR ((col0 = 24) OR col1 IS NULL) AND col1 > 67.43) AND (col0 <= 62) AND (col0 IS NULL)) AND (col1 > 90.27) AND (col0 <= 64))))))) AND col3 > 13
----
INSERT INTO tab0 VALUES(0,70,18.57,'adbci',21,67.60,'zlhlo')
----
INSERT INTO tab0 VALUES(1,51,91.5,'hcebu',64,78.39,'dorps')
----
INSERT INTO tab0 VALUES(2,46,75.3,'afket',40,77.42,'mxobb')
----
CREATE UNIQUE INDEX idx_tab2_2 ON tab2 (col4,col3)
----
CREATE INDEX idx_tab2_3 ON tab2 (col1 DESC,col0,col3)
----
CREATE UNIQUE INDEX idx_tab3_0 ON tab3 (col3 DESC,col0 DESC)
----
CREATE INDEX idx_tab3_2 ON tab3 (col4 DESC)
----
CREATE UNIQUE INDEX idx_tab3_3 ON tab3 (col0)
----
CREATE UNIQUE INDEX idx_tab3_5 ON tab3 (col1)
----
CREATE INDEX idx_tab4_0 ON tab4 (col3,col4 DESC)
----
CREATE INDEX idx_tab4_1 ON tab4 (col0,col3)
----
CREATE INDEX idx_tab4_2 ON tab4 (col4)
----
SELECT pk FROM tab0 WHERE col1 IN (SELECT col4 FROM tab0 WHERE ((col0 > 57) AND (((col3 >= 46) OR col0 = 19)) OR col3 < 42)) OR col4 <= 49.74 OR col3 = 26 AND col4 < 5.90
----
SELECT pk FROM tab0 WHERE col1 IN (SELECT col4 FROM tab0 WHERE ((57 < col0) AND (((46 <= col3) OR 19 = col0)) OR 42 > col3)) OR 49.74 >= col4 OR 26 = col3 AND 5.90 > col4
----
SELECT pk FROM tab1 WHERE col1 IN (SELECT col4 FROM tab1 WHERE ((col0 > 57) AND (((col3 >= 46) OR col0 = 19)) OR col3 < 42)) OR col4 <= 49.74 OR col3 = 26 AND col4 < 5.90
----
SELECT pk FROM tab1 WHERE col1 IN (SELECT col4 FROM tab1 WHERE ((57 < col0) AND (((46 <= col3) OR 19 = col0)) OR 42 > col3)) OR 49.74 >= col4 OR 26 = col3 AND 5.90 > col4
----
SELECT pk FROM tab2 WHERE col1 IN (SELECT col4 FROM tab2 WHERE ((col0 > 57) AND (((col3 >= 46) OR col0 = 19)) OR col3 < 42)) OR col4 <= 49.74 OR col3 = 26 AND col4 < 5.90
----
SELECT pk FROM tab2 WHERE col1 IN (SELECT col4 FROM tab2 WHERE ((57 < col0) AND (((46 <= col3) OR 19 = col0)) OR 42 > col3)) OR 49.74 >= col4 OR 26 = col3 AND 5.90 > col4
----
SELECT pk FROM tab3 WHERE col1 IN (SELECT col4 FROM tab3 WHERE ((col0 > 57) AND (((col3 >= 46) OR col0 = 19)) OR col3 < 42)) OR col4 <= 49.74 OR col3 = 26 AND col4 < 5.90
----
SELECT pk FROM tab3 WHERE col1 IN (SELECT col4 FROM tab3 WHERE ((57 < col0) AND (((46 <= col3) OR 19 = col0)) OR 42 > col3)) OR 49.74 >= col4 OR 26 = col3 AND 5.90 > col4
----
SELECT pk FROM tab4 WHERE col1 IN (SELECT col4 FROM tab4 WHERE ((col0 > 57) AND (((col3 >= 46) OR col0 = 19)) OR col3 < 42)) OR col4 <= 49.74 OR col3 = 26 AND col4 < 5.90
----
SELECT pk FROM tab4 WHERE col1 IN (SELECT col4 FROM tab4 WHERE ((57 < col0) AND (((46 <= col3) OR 19 = col0)) OR 42 > col3)) OR 49.74 >= col4 OR 26 = col3 AND 5.90 > col4
----
SELECT pk FROM tab0 WHERE col1 < 79.88 AND col3 <= 83 OR col3 > 67 OR col1 <= 31.64
----
SELECT pk FROM tab0 WHERE 79.88 > col1 AND 83 >= col3 OR 67 < col3 OR 31.64 >= col1
----
SELECT pk FROM tab1 WHERE col1 < 79.88 AND col3 <= 83 OR col3 > 67 OR col1 <= 31.64
----
SELECT pk FROM tab1 WHERE 79.88 > col1 AND 83 >= col3 OR 67 < col3 OR 31.64 >= col1
----
SELECT pk FROM tab2 WHERE col1 < 79.88 AND col3 <= 83 OR col3 > 67 OR col1 <= 31.64
----
SELECT pk FROM tab2 WHERE 79.88 > col1 AND 83 >= col3 OR 67 < col3 OR 31.64 >= col1
----
SELECT pk FROM tab3 WHERE col1 < 79.88 AND col3 <= 83 OR col3 > 67 OR col1 <= 31.64
----
SELECT pk FROM tab3 WHERE 79.88 > col1 AND 83 >= col3 OR 67 < col3 OR 31.64 >= col1
----
INSERT INTO tab0 VALUES(0,91,74.83,'wgzmh',27,21.19,'nzsqj')
----
INSERT INTO tab0 VALUES(1,51,88.41,'vipif',32,79.21,'aebzr')
----
INSERT INTO tab0 VALUES(2,12,85.37,'kxeqo',10,77.85,'sbxmw')
----
CREATE INDEX idx_tab2_1 ON tab2 (col0 DESC)
----
CREATE INDEX idx_tab2_2 ON tab2 (col1)
----
CREATE UNIQUE INDEX idx_tab2_5 ON tab2 (col4)
----
CREATE UNIQUE INDEX idx_tab3_0 ON tab3 (col3 DESC,col1)
----
CREATE INDEX idx_tab3_2 ON tab3 (col0,col1 DESC)
----
CREATE UNIQUE INDEX idx_tab3_4 ON tab3 (col4,col1 DESC,col0)
----
CREATE UNIQUE INDEX idx_tab4_0 ON tab4 (col3,col4 DESC)
----
CREATE UNIQUE INDEX idx_tab4_1 ON tab4 (col0 DESC)
----
SELECT pk FROM tab0 WHERE pk IS NULL
----
DELETE FROM tab0 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab0 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab0 WHERE NOT (col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL)))))
----
DELETE FROM tab1 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab1 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab1 WHERE NOT (col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL)))))
----
DELETE FROM tab2 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab2 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab2 WHERE NOT (col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL)))))
----
DELETE FROM tab3 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab3 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab3 WHERE NOT (col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL)))))
----
DELETE FROM tab4 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab4 WHERE col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL))))
----
SELECT pk FROM tab4 WHERE NOT (col1 < 58.33 OR (((col3 <= 45 AND col3 BETWEEN 34 AND 27 OR col0 >= 81 AND col1 = 84.30 OR (col0 > 6 OR (col3 <= 52) OR col1 < 43.21)) AND col3 > 52 OR col1 < 82.89 AND col0 >= 11 AND col3 < 62 OR ((col4 IS NULL)))))
----
DELETE FROM tab0 WHERE ((col0 > 2))
----
SELECT pk FROM tab0 WHERE ((col0 > 2))
----
SELECT pk FROM tab0 WHERE NOT (((col0 > 2)))
----
INSERT INTO tab0 VALUES(0,90,31.3,'yutgr',57,52.72,'ongxg')
----
INSERT INTO tab0 VALUES(1,22,89.10,'ugvpx',87,86.7,'hpbgx')
----
INSERT INTO tab0 VALUES(2,2,42.95,'bqukt',10,5.80,'pavlf')
----
CREATE INDEX idx_tab2_0 ON tab2 (col4,col1,col3 DESC)
----
CREATE UNIQUE INDEX idx_tab2_1 ON tab2 (col3 DESC)
----
CREATE UNIQUE INDEX idx_tab2_2 ON tab2 (col0 DESC)
----
CREATE UNIQUE INDEX idx_tab3_0 ON tab3 (col1 DESC,col3,col4)
----
CREATE INDEX idx_tab3_1 ON tab3 (col3 DESC,col0)
----
CREATE INDEX idx_tab3_2 ON tab3 (col4)
----
CREATE INDEX idx_tab4_0 ON tab4 (col0 DESC)
----
CREATE INDEX idx_tab4_1 ON tab4 (col1,col4)
----
CREATE INDEX idx_tab4_3 ON tab4 (col4)
----
CREATE UNIQUE INDEX idx_tab4_4 ON tab4 (col3 DESC)
----
SELECT pk FROM tab0 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,92,96,26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (79,47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (62.81,85.85,44.58,30.98,34.53) OR col3 IS NULL) AND (col3 IN (52,58,51,90,6,37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab0 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,26,92,96) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (47,79) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (30.98,34.53,44.58,62.81,85.85) OR col3 IS NULL) AND (col3 IN (37,6,58,52,90,51) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab0 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND (col3 = 84 OR col3 = 92 OR col3 = 96 OR col3 = 26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR (col3 = 79 OR col3 = 47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR (col1 = 62.81 OR col1 = 85.85 OR col1 = 44.58 OR col1 = 30.98 OR col1 = 34.53) OR col3 IS NULL) AND ((col3 = 52 OR col3 = 58 OR col3 = 51 OR col3 = 90 OR col3 = 6 OR col3 = 37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab1 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,92,96,26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (79,47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (62.81,85.85,44.58,30.98,34.53) OR col3 IS NULL) AND (col3 IN (52,58,51,90,6,37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab1 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,26,92,96) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (47,79) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (30.98,34.53,44.58,62.81,85.85) OR col3 IS NULL) AND (col3 IN (37,6,58,52,90,51) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab1 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND (col3 = 84 OR col3 = 92 OR col3 = 96 OR col3 = 26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR (col3 = 79 OR col3 = 47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR (col1 = 62.81 OR col1 = 85.85 OR col1 = 44.58 OR col1 = 30.98 OR col1 = 34.53) OR col3 IS NULL) AND ((col3 = 52 OR col3 = 58 OR col3 = 51 OR col3 = 90 OR col3 = 6 OR col3 = 37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab2 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,92,96,26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (79,47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (62.81,85.85,44.58,30.98,34.53) OR col3 IS NULL) AND (col3 IN (52,58,51,90,6,37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab2 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,26,92,96) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (47,79) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (30.98,34.53,44.58,62.81,85.85) OR col3 IS NULL) AND (col3 IN (37,6,58,52,90,51) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab2 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND (col3 = 84 OR col3 = 92 OR col3 = 96 OR col3 = 26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR (col3 = 79 OR col3 = 47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR (col1 = 62.81 OR col1 = 85.85 OR col1 = 44.58 OR col1 = 30.98 OR col1 = 34.53) OR col3 IS NULL) AND ((col3 = 52 OR col3 = 58 OR col3 = 51 OR col3 = 90 OR col3 = 6 OR col3 = 37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab3 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,92,96,26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (79,47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (62.81,85.85,44.58,30.98,34.53) OR col3 IS NULL) AND (col3 IN (52,58,51,90,6,37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab3 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,26,92,96) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (47,79) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (30.98,34.53,44.58,62.81,85.85) OR col3 IS NULL) AND (col3 IN (37,6,58,52,90,51) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab3 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND (col3 = 84 OR col3 = 92 OR col3 = 96 OR col3 = 26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR (col3 = 79 OR col3 = 47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR (col1 = 62.81 OR col1 = 85.85 OR col1 = 44.58 OR col1 = 30.98 OR col1 = 34.53) OR col3 IS NULL) AND ((col3 = 52 OR col3 = 58 OR col3 = 51 OR col3 = 90 OR col3 = 6 OR col3 = 37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab4 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,92,96,26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (79,47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (62.81,85.85,44.58,30.98,34.53) OR col3 IS NULL) AND (col3 IN (52,58,51,90,6,37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab4 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND col3 IN (84,26,92,96) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR col3 IN (47,79) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR col1 IN (30.98,34.53,44.58,62.81,85.85) OR col3 IS NULL) AND (col3 IN (37,6,58,52,90,51) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab4 WHERE (col0 >= 93) AND (((col1 >= 55.99 OR (col3 <= 1) OR (((col3 >= 24))) AND (col3 = 84 OR col3 = 92 OR col3 = 96 OR col3 = 26) OR ((col3 >= 53)) AND (col4 >= 6.22) AND (col0 >= 33 OR (((((col0 >= 6)) AND ((col3 < 27 AND (((col0 > 78))))) OR col1 > 90.47 OR (col3 = 79 OR col3 = 47) AND col1 > 57.55 OR ((col1 < 77.85)) OR (col3 = 36 OR col0 < 90) AND col3 <= 44))) OR (col1 = 62.81 OR col1 = 85.85 OR col1 = 44.58 OR col1 = 30.98 OR col1 = 34.53) OR col3 IS NULL) AND ((col3 = 52 OR col3 = 58 OR col3 = 51 OR col3 = 90 OR col3 = 6 OR col3 = 37) OR (col3 >= 55)))) AND ((col1 = 46.0 OR col3 <= 24)) AND ((((col0 < 75)) AND col4 >= 77.95)) OR (col0 < 40) OR ((((((col3 IS NULL))) OR (col3 > 61) AND col3 > 30)) OR col1 < 11.20) AND col1 >= 17.42 AND col0 >= 96 OR col3 > 47 OR (((col3 BETWEEN 4 AND 79) AND col3 >= 51)))
----
SELECT pk FROM tab0 WHERE (col0 IN (55,20,12,17))
----
SELECT pk FROM tab0 WHERE (col0 IN (12,20,55,17))
----
INSERT INTO tab0 VALUES(0,683,546.7,'yfzcy',167,802.12,'ntagf')
----
INSERT INTO tab0 VALUES(1,646,587.66,'lfjsk',165,50.41,'glrnm')
----
INSERT INTO tab0 VALUES(2,187,712.5,'zqxmi',473,825.24,'nrvcq')
----
CREATE UNIQUE INDEX idx_tab2_0 ON tab2 (col3 DESC)
----
CREATE UNIQUE INDEX idx_tab2_2 ON tab2 (col4,col1 DESC)
----
CREATE INDEX idx_tab2_4 ON tab2 (col0)
----
CREATE UNIQUE INDEX idx_tab3_1 ON tab3 (col3,col1)
----
CREATE UNIQUE INDEX idx_tab3_2 ON tab3 (col3 DESC,col0 DESC)
----
CREATE INDEX idx_tab3_4 ON tab3 (col4 DESC,col1 DESC)
----
CREATE INDEX idx_tab4_0 ON tab4 (col3,col4,col0 DESC)
----
CREATE INDEX idx_tab4_1 ON tab4 (col0,col3 DESC)
----
CREATE UNIQUE INDEX idx_tab4_4 ON tab4 (col1 DESC)
----
SELECT pk FROM tab0 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk FROM tab1 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk FROM tab2 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk FROM tab3 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk FROM tab4 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk FROM tab0 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1
----
SELECT pk FROM tab1 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1
----
SELECT pk FROM tab2 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1
----
SELECT pk FROM tab3 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1
----
SELECT pk FROM tab4 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1
----
SELECT pk, col0 FROM tab0 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab1 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab2 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab3 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab4 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab0 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 2 DESC
----
SELECT pk, col0 FROM tab1 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 2 DESC
----
SELECT pk, col0 FROM tab2 WHERE (col3 <= 548 OR (col0 >= 876 AND col0 > 113) AND col1 > 287.34) AND ((col1 > 436.4)) AND ((col3 >= 907) AND (col3 > 253 OR col3 > 950 AND col4 >= 323.24 OR col1 > 177.82)) AND (col1 > 91.72 AND col0 < 727 AND col1 > 443.80) ORDER BY 2 DESC
----
INSERT INTO tab0 VALUES(0,245,222.8,'prhgg',246,241.36,'mjpsx')
----
INSERT INTO tab0 VALUES(1,248,226.59,'nezhq',247,242.61,'onkov')
----
INSERT INTO tab0 VALUES(2,249,227.79,'mvgef',248,243.47,'vpiqu')
----
CREATE UNIQUE INDEX idx_tab2_1 ON tab2 (col1 DESC,col0 DESC)
----
CREATE UNIQUE INDEX idx_tab2_2 ON tab2 (col4)
----
CREATE UNIQUE INDEX idx_tab2_5 ON tab2 (col3 DESC)
----
CREATE INDEX idx_tab3_0 ON tab3 (col3 DESC)
----
CREATE UNIQUE INDEX idx_tab3_1 ON tab3 (col1,col4,col0 DESC)
----
CREATE UNIQUE INDEX idx_tab3_4 ON tab3 (col4)
----
CREATE INDEX idx_tab4_0 ON tab4 (col1 DESC,col4)
----
CREATE INDEX idx_tab4_1 ON tab4 (col4 DESC)
----
CREATE INDEX idx_tab4_3 ON tab4 (col0 DESC,col3 DESC)
----
SELECT pk FROM tab0 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk FROM tab1 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk FROM tab2 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk FROM tab3 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk FROM tab4 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk FROM tab0 WHERE col3 = 38 ORDER BY 1
----
SELECT pk FROM tab1 WHERE col3 = 38 ORDER BY 1
----
SELECT pk FROM tab2 WHERE col3 = 38 ORDER BY 1
----
SELECT pk FROM tab3 WHERE col3 = 38 ORDER BY 1
----
SELECT pk FROM tab4 WHERE col3 = 38 ORDER BY 1
----
SELECT pk, col0 FROM tab0 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab1 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab2 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab3 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab4 WHERE col3 = 38 ORDER BY 1 DESC
----
SELECT pk, col0 FROM tab0 WHERE col3 = 38 ORDER BY 2 DESC
----
SELECT pk, col0 FROM tab1 WHERE col3 = 38 ORDER BY 2 DESC
----
SELECT pk, col0 FROM tab2 WHERE col3 = 38 ORDER BY 2 DESC
----
INSERT INTO tab0 VALUES(0,535,860.48,'uxbns',253,640.58,'jvqkl')
----
INSERT INTO tab0 VALUES(1,885,944.95,'uwwcx',597,372.48,'gxycv')
----
INSERT INTO tab0 VALUES(2,646,872.16,'guvze',576,166.79,'pyqzq')
----
CREATE INDEX idx_tab2_0 ON tab2 (col3 DESC,col0 DESC)
----
CREATE UNIQUE INDEX idx_tab2_1 ON tab2 (col1)
----
CREATE UNIQUE INDEX idx_tab2_2 ON tab2 (col4 DESC,col3)
----
CREATE INDEX idx_tab2_3 ON tab2 (col0)
----
CREATE INDEX idx_tab3_0 ON tab3 (col1)
----
CREATE UNIQUE INDEX idx_tab3_3 ON tab3 (col3,col4,col0)
----
CREATE UNIQUE INDEX idx_tab3_4 ON tab3 (col0,col3)
----
CREATE UNIQUE INDEX idx_tab3_5 ON tab3 (col4)
----
CREATE UNIQUE INDEX idx_tab4_0 ON tab4 (col3,col0)
----
CREATE UNIQUE INDEX idx_tab4_1 ON tab4 (col4 DESC,col0,col1 DESC)
----
CREATE INDEX idx_tab4_2 ON tab4 (col4 DESC,col1)
----
SELECT ALL * FROM tab0 AS cor0 WHERE col3 <= - col4 + - - 99
----
SELECT ALL * FROM tab1 AS cor0 WHERE col3 <= - col4 + - - 99
----
SELECT ALL * FROM tab2 AS cor0 WHERE col3 <= - col4 + - - 99
----
SELECT ALL * FROM tab3 AS cor0 WHERE col3 <= - col4 + - - 99
----
SELECT ALL * FROM tab4 AS cor0 WHERE col3 <= - col4 + - - 99
----
SELECT ALL 39 + + + 70 AS col3 FROM tab0 WHERE NULL <= NULL
----
SELECT ALL 39 + + + 70 AS col3 FROM tab1 WHERE NULL <= NULL
----
SELECT ALL 39 + + + 70 AS col3 FROM tab2 WHERE NULL <= NULL
----
SELECT ALL 39 + + + 70 AS col3 FROM tab3 WHERE NULL <= NULL
----
SELECT ALL 39 + + + 70 AS col3 FROM tab4 WHERE NULL <= NULL
----
SELECT + + 60 AS col3, 29 AS col2 FROM tab0 WHERE col1 - col0 >= - col1
----
SELECT + + 60 AS col3, 29 AS col2 FROM tab1 WHERE col1 - col0 >= - col1
----
SELECT + + 60 AS col3, 29 AS col2 FROM tab2 WHERE col1 - col0 >= - col1
----
SELECT + + 60 AS col3, 29 AS col2 FROM tab3 WHERE col1 - col0 >= - col1
----
SELECT + + 60 AS col3, 29 AS col2 FROM tab4 WHERE col1 - col0 >= - col1
----
SELECT + col0 AS col2 FROM tab0 AS cor0 WHERE col2 IS NOT NULL
----
INSERT INTO tab0 VALUES(0,87,51.64,'lbcbe',15,68.33,'wvwnc')
----
INSERT INTO tab0 VALUES(1,35,59.0,'yohfs',73,32.75,'gsatd')
----
INSERT INTO tab0 VALUES(2,73,6.52,'noeeg',69,91.59,'cpteg')
----
CREATE UNIQUE INDEX idx_tab2_0 ON tab2 (col3)
----
CREATE INDEX idx_tab2_1 ON tab2 (col1)
----
CREATE UNIQUE INDEX idx_tab2_2 ON tab2 (col0)
----
CREATE INDEX idx_tab2_3 ON tab2 (col4)
----
CREATE INDEX idx_tab3_0 ON tab3 (col0)
----
CREATE UNIQUE INDEX idx_tab3_1 ON tab3 (col4 DESC,col3 DESC,col1 DESC)
----
CREATE UNIQUE INDEX idx_tab3_2 ON tab3 (col4 DESC,col1 DESC)
----
CREATE INDEX idx_tab4_0 ON tab4 (col0 DESC,col1 DESC)
----
CREATE UNIQUE INDEX idx_tab4_1 ON tab4 (col3 DESC,col1 DESC)
----
CREATE UNIQUE INDEX idx_tab4_5 ON tab4 (col1,col0)
----
SELECT pk, col0 FROM tab0
----
IF EXISTS (SELECT TABLE_NAME FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_NAME = 'view_1_tab0_946') DROP VIEW view_1_tab0_946
----
DROP VIEW IF EXISTS view_1_tab0_946
----
IF EXISTS (SELECT TABLE_NAME FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_NAME = 'view_2_tab0_946') DROP VIEW view_2_tab0_946
----
DROP VIEW IF EXISTS view_2_tab0_946
----
IF EXISTS (SELECT TABLE_NAME FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_NAME = 'view_3_tab0_946') DROP VIEW view_3_tab0_946
----
DROP VIEW IF EXISTS view_3_tab0_946
----
CREATE VIEW view_1_tab0_946 AS SELECT pk, col0 FROM tab0 WHERE col3 >= 49
----
CREATE VIEW view_2_tab0_946 AS SELECT pk, col0 FROM tab0 WHERE NOT (col3 >= 49)
----
CREATE VIEW view_3_tab0_946 AS SELECT pk FROM view_1_tab0_946
----
SELECT pk, col0 FROM tab0 WHERE col3 >= 49
----
SELECT pk, col0 FROM tab0 WHERE NOT (col3 >= 49)
----
SELECT pk, col0 FROM view_1_tab0_946
----
SELECT pk, col0 FROM view_2_tab0_946
----
SELECT pk, col0 FROM tab0 WHERE col3 >= 49 UNION ALL SELECT pk, col0 FROM tab0 WHERE NOT (col3 >= 49)
----
SELECT pk, col0 FROM view_1_tab0_946 UNION ALL SELECT pk, col0 FROM view_2_tab0_946
----
SELECT pk, col0 FROM tab0 WHERE col3 >= 49 UNION SELECT pk, col0 FROM tab0 WHERE NOT (col3 >= 49)
----
CREATE TABLE t1(a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER)
----
INSERT INTO t1(e,c,b,d,a) VALUES(103,102,100,101,104)
----
INSERT INTO t1(a,c,d,e,b) VALUES(107,106,108,109,105)
----
INSERT INTO t1(e,d,b,a,c) VALUES(110,114,112,111,113)
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END
  FROM t1
 ORDER BY 1
----
SELECT a+b*2+c*3+d*4+e*5,
       (a+b+c+d+e)/5
  FROM t1
 ORDER BY 1,2
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE (e>c OR e<d)
   AND d>e
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
 ORDER BY 4,2,1,3,5
----
SELECT c,
       d-e,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a+b*2+c*3+d*4,
       e
  FROM t1
 WHERE d NOT BETWEEN 110 AND 150
    OR c BETWEEN b-2 AND d+2
    OR (e>c OR e<d)
 ORDER BY 1,5,3,2,4
----
SELECT a+b*2+c*3+d*4,
       (a+b+c+d+e)/5,
       abs(a),
       e,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       d
  FROM t1
 WHERE b>c
   AND c>d
 ORDER BY 3,4,5,1,2,6
----
SELECT a+b*2+c*3+d*4,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       c
  FROM t1
 WHERE (c<=d-2 OR c>=d+2)
 ORDER BY 4,2,1,3
----
SELECT CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END
  FROM t1
 ORDER BY 1
----
SELECT (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)
  FROM t1
 WHERE (a>b-2 AND a<b+2)
    OR c>d
 ORDER BY 1
----
SELECT a,
       (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       b-c,
       a-b,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END
  FROM t1
 WHERE c BETWEEN b-2 AND d+2
    OR a>b
    OR b>c
 ORDER BY 1,4,3,2,5
----
SELECT CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2+c*3+d*4,
       a+b*2+c*3,
       c,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       abs(b-c)
  FROM t1
 WHERE EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
    OR b>c
    OR d NOT BETWEEN 110 AND 150
 ORDER BY 4,1,5,2,6,3,7
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2+c*3,
       (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       c,
       b-c
  FROM t1
 WHERE EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
    OR a>b
    OR d NOT BETWEEN 110 AND 150
 ORDER BY 5,3,6,1,2,4
----
SELECT (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       d,
       a+b*2+c*3+d*4,
       a-b,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)
  FROM t1
 WHERE c BETWEEN b-2 AND d+2
    OR c>d
 ORDER BY 3,5,4,1,2
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       a-b,
       abs(b-c),
       c,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2+c*3+d*4
  FROM t1
 ORDER BY 4,3,6,2,5,1
----
SELECT a+b*2,
       a,
       a+b*2+c*3+d*4+e*5,
       (a+b+c+d+e)/5,
       e,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE a>b
 ORDER BY 5,4,6,2,1,7,3
----
SELECT a,
       b
  FROM t1
 ORDER BY 1,2
----
SELECT c,
       a-b,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)
  FROM t1
 WHERE c BETWEEN b-2 AND d+2
 ORDER BY 1,2,3
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       a+b*2+c*3+d*4+e*5,
       abs(b-c),
       b-c,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a-b
  FROM t1
 WHERE b>c
   AND a>b
   AND d NOT BETWEEN 110 AND 150
 ORDER BY 2,1,6,4,3,5
----
SELECT a+b*2+c*3+d*4+e*5,
       abs(a),
       b-c,
       c-d,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a
  FROM t1
 WHERE c BETWEEN b-2 AND d+2
    OR e+d BETWEEN a+b-10 AND c+130
 ORDER BY 1,5,4,2,6,3
----
SELECT CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       c,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       b-c,
       b,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a+b*2
  FROM t1
 ORDER BY 4,3,5,1,6,2,7
----
SELECT a,
       a+b*2+c*3+d*4+e*5,
       c-d,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       b-c,
       a+b*2
  FROM t1
 ORDER BY 6,2,4,5,3,1
----
SELECT d-e,
       abs(a),
       b,
       c-d,
       a+b*2+c*3,
       abs(b-c),
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE (e>c OR e<d)
   AND d>e
   AND c>d
 ORDER BY 1,3,7,5,2,6,4
----
SELECT CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2+c*3,
       a+b*2+c*3+d*4+e*5,
       (a+b+c+d+e)/5,
       a+b*2+c*3+d*4,
       b-c,
       c
  FROM t1
 WHERE d NOT BETWEEN 110 AND 150
 ORDER BY 2,5,1,7,3,6,4
----
SELECT e,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       a-b,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       c-d,
       c
  FROM t1
 WHERE d NOT BETWEEN 110 AND 150
 ORDER BY 1,4,5,6,2,3
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END
  FROM t1
 WHERE e+d BETWEEN a+b-10 AND c+130
   AND c>d
 ORDER BY 1
----
SELECT a+b*2+c*3,
       abs(b-c),
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a,
       a+b*2+c*3+d*4,
       a+b*2,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)
  FROM t1
 WHERE (a>b-2 AND a<b+2)
   AND c BETWEEN b-2 AND d+2
 ORDER BY 6,1,7,3,4,5,2
----
SELECT a+b*2,
       a+b*2+c*3,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       c,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE d>e
   AND (c<=d-2 OR c>=d+2)
   AND b>c
 ORDER BY 2,3,1,5,4
----
INSERT INTO t1(e,c,b,d,a) VALUES(NULL,102,NULL,101,104)
----
INSERT INTO t1(e,d,b,a,c) VALUES(110,114,112,NULL,113)
----
INSERT INTO t1(d,c,e,a,b) VALUES(116,119,117,115,NULL)
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END
  FROM t1
----
SELECT e,
       abs(a),
       b,
       abs(b-c),
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2,
       a+b*2+c*3+d*4
  FROM t1
 WHERE a>b
----
SELECT abs(b-c),
       b,
       a+b*2+c*3+d*4
  FROM t1
 WHERE coalesce(a,b,c,d,e)<>0
   AND (a>b-2 AND a<b+2)
----
SELECT a,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       a+b*2+c*3+d*4+e*5,
       d
  FROM t1
 WHERE a IS NULL
----
SELECT (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       d-e
  FROM t1
 WHERE e+d BETWEEN a+b-10 AND c+130
    OR (a>b-2 AND a<b+2)
----
SELECT a+b*2+c*3,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       b,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a+b*2+c*3+d*4+e*5
  FROM t1
 WHERE d NOT BETWEEN 110 AND 150
    OR b IS NOT NULL
----
SELECT abs(b-c)
  FROM t1
----
SELECT a+b*2
  FROM t1
 WHERE (a>b-2 AND a<b+2)
   AND b IS NOT NULL
   AND a>b
----
SELECT c,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       d-e,
       c-d,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       a+b*2+c*3+d*4+e*5,
       abs(a)
  FROM t1
 WHERE (c<=d-2 OR c>=d+2)
   AND coalesce(a,b,c,d,e)<>0
   AND c>d
----
SELECT d,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       abs(b-c),
       c-d,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a+b*2,
       b-c
  FROM t1
 WHERE b>c
   AND (e>c OR e<d)
----
SELECT e,
       b,
       a,
       a+b*2+c*3+d*4+e*5,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       a-b,
       (a+b+c+d+e)/5
  FROM t1
 WHERE b IS NOT NULL
   AND coalesce(a,b,c,d,e)<>0
----
SELECT (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       a+b*2+c*3,
       a-b,
       d-e
  FROM t1
 WHERE d NOT BETWEEN 110 AND 150
   AND c>d
   AND c BETWEEN b-2 AND d+2
----
SELECT a+b*2+c*3+d*4+e*5,
       abs(a),
       d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE e+d BETWEEN a+b-10 AND c+130
   AND (e>c OR e<d)
----
SELECT (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d)
  FROM t1
----
SELECT d-e,
       c-d,
       (a+b+c+d+e)/5
  FROM t1
 WHERE coalesce(a,b,c,d,e)<>0
    OR b>c
    OR b IS NOT NULL
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       b,
       a+b*2+c*3+d*4,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       d-e,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       a-b
  FROM t1
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE a+1 WHEN b THEN 111 WHEN c THEN 222
        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END,
       e
  FROM t1
 WHERE coalesce(a,b,c,d,e)<>0
    OR b>c
    OR a>b
----
SELECT (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d),
       d-e,
       a+b*2+c*3+d*4+e*5
  FROM t1
 WHERE c BETWEEN b-2 AND d+2
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
   AND b IS NOT NULL
----
SELECT a+b*2+c*3,
       a+b*2+c*3+d*4+e*5,
       e,
       a-b,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END
  FROM t1
 WHERE c>d
----
SELECT e,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       d-e,
       d,
       a+b*2+c*3+d*4
  FROM t1
----
SELECT e,
       a,
       (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d)
  FROM t1
 WHERE EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
   AND d NOT BETWEEN 110 AND 150
----
SELECT a+b*2,
       abs(b-c),
       c,
       d-e,
       a+b*2+c*3+d*4,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)
  FROM t1
 WHERE (e>c OR e<d)
    OR (e>a AND e<b)
    OR a IS NULL
----
SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d)
  FROM t1
 WHERE e+d BETWEEN a+b-10 AND c+130
    OR c>d
----
SELECT abs(b-c),
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       d,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END
  FROM t1
 WHERE a IS NULL
    OR d NOT BETWEEN 110 AND 150
----
SELECT a,
       c-d,
       a+b*2+c*3,
       a+b*2+c*3+d*4,
       (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d)
  FROM t1
 WHERE (a>b-2 AND a<b+2)
    OR b IS NOT NULL
    OR EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
----
SELECT a-b,
       a+b*2+c*3+d*4+e*5,
       b,
       abs(a),
       a
  FROM t1
 WHERE b>c
   AND coalesce(a,b,c,d,e)<>0
   AND (e>a AND e<b)
----
SELECT abs(b-c),
       a+b*2+c*3,
       (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b),
       a-b,
       a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
----
INSERT INTO t1(c,d,b,e,a) VALUES(123,122,124,NULL,121)
----
INSERT INTO t1(a,d,b,e,c) VALUES(127,128,129,126,125)
----
INSERT INTO t1(e,c,a,d,b) VALUES(132,134,131,133,130)
----
SELECT a+b*2+c*3+d*4+e*5,
       (a+b+c+d+e)/5
  FROM t1
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE d>e
   AND (e>c OR e<d)
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE d>e
   AND (e>c OR e<d)
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
 ORDER BY 2,4
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE (e>c OR e<d)
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
   AND d>e
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE (e>c OR e<d)
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
   AND d>e
 ORDER BY 3,2,5,1,4
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE (e>c OR e<d)
   AND d>e
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
----
SELECT a+b*2+c*3+d*4+e*5,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       abs(b-c),
       (a+b+c+d+e)/5,
       a+b*2+c*3
  FROM t1
 WHERE (e>c OR e<d)
   AND d>e
   AND EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)
 ORDER BY 3,2,1,5
----
SELECT a,
       a+b*2+c*3+d*4,
       e,
       d,
       a+b*2
  FROM t1
 WHERE (e>a AND e<b)
----
SELECT a,
       a+b*2+c*3+d*4,
       e,
       d,
       a+b*2
  FROM t1
 WHERE (e>a AND e<b)
 ORDER BY 4,2,3,5
----
SELECT a+b*2+c*3+d*4,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2+c*3+d*4+e*5
  FROM t1
----
SELECT a+b*2+c*3+d*4,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END,
       a+b*2+c*3+d*4+e*5
  FROM t1
 ORDER BY 1,2,3
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE (a>b-2 AND a<b+2)
   AND (e>a AND e<b)
   AND b>c
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE (a>b-2 AND a<b+2)
   AND (e>a AND e<b)
   AND b>c
 ORDER BY 3,2
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE b>c
   AND (e>a AND e<b)
   AND (a>b-2 AND a<b+2)
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE b>c
   AND (e>a AND e<b)
   AND (a>b-2 AND a<b+2)
 ORDER BY 2,3,1
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE (e>a AND e<b)
   AND (a>b-2 AND a<b+2)
   AND b>c
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE (e>a AND e<b)
   AND (a>b-2 AND a<b+2)
   AND b>c
 ORDER BY 1,2
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE b>c
   AND (a>b-2 AND a<b+2)
   AND (e>a AND e<b)
----
SELECT b,
       a+b*2+c*3,
       c-d,
       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222
        WHEN a<b+3 THEN 333 ELSE 444 END
  FROM t1
 WHERE b>c
   AND (a>b-2 AND a<b+2)
   AND (e>a AND e<b)
 ORDER BY 4,2
----
SELECT e,
       a,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       (a+b+c+d+e)/5,
       d-e
  FROM t1
 WHERE (c<=d-2 OR c>=d+2)
    OR d>e
----
SELECT e,
       a,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       (a+b+c+d+e)/5,
       d-e
  FROM t1
 WHERE (c<=d-2 OR c>=d+2)
    OR d>e
 ORDER BY 3,1,5,2,4
----
SELECT e,
       a,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       (a+b+c+d+e)/5,
       d-e
  FROM t1
 WHERE d>e
    OR (c<=d-2 OR c>=d+2)
----
SELECT e,
       a,
       CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END,
       (a+b+c+d+e)/5,
       d-e
  FROM t1
 WHERE d>e
    OR (c<=d-2 OR c>=d+2)
 ORDER BY 4,1,5,3,2
----
SELECT a+b*2+c*3+d*4+e*5
  FROM t1
----
SELECT a+b*2+c*3+d*4+e*5
  FROM t1
 ORDER BY 1
----
SELECT d-e
  FROM t1
 WHERE b>c
    OR a>b
----
SELECT d-e
  FROM t1
 WHERE b>c
    OR a>b
 ORDER BY 1
----
CREATE TABLE t1(
  a1 INTEGER,
  b1 INTEGER,
  c1 INTEGER,
  d1 INTEGER,
  e1 INTEGER,
  x1 VARCHAR(30)
)
----
CREATE TABLE t2(
  a2 INTEGER,
  b2 INTEGER,
  c2 INTEGER,
  d2 INTEGER,
  e2 INTEGER,
  x2 VARCHAR(30)
)
----
CREATE TABLE t3(
  a3 INTEGER,
  b3 INTEGER,
  c3 INTEGER,
  d3 INTEGER,
  e3 INTEGER,
  x3 VARCHAR(30)
)
----
CREATE TABLE t4(
  a4 INTEGER,
  b4 INTEGER,
  c4 INTEGER,
  d4 INTEGER,
  e4 INTEGER,
  x4 VARCHAR(30)
)
----
CREATE TABLE t5(
  a5 INTEGER,
  b5 INTEGER,
  c5 INTEGER,
  d5 INTEGER,
  e5 INTEGER,
  x5 VARCHAR(30)
)
----
CREATE TABLE t6(
  a6 INTEGER,
  b6 INTEGER,
  c6 INTEGER,
  d6 INTEGER,
  e6 INTEGER,
  x6 VARCHAR(30)
)
----
CREATE TABLE t7(
  a7 INTEGER,
  b7 INTEGER,
  c7 INTEGER,
  d7 INTEGER,
  e7 INTEGER,
  x7 VARCHAR(30)
)
----
CREATE TABLE t8(
  a8 INTEGER,
  b8 INTEGER,
  c8 INTEGER,
  d8 INTEGER,
  e8 INTEGER,
  x8 VARCHAR(30)
)
----
CREATE TABLE t9(
  a9 INTEGER,
  b9 INTEGER,
  c9 INTEGER,
  d9 INTEGER,
  e9 INTEGER,
  x9 VARCHAR(30)
)
----
INSERT INTO t1 VALUES(382,414,67,992,483,'table tn1 row 1')
----
INSERT INTO t7 VALUES(31,30,931,886,590,'table tn7 row 1')
----
INSERT INTO t5 VALUES(832,186,734,114,697,'table tn5 row 1')
----
SELECT * FROM t1
----
SELECT * FROM t2
----
SELECT * FROM t3
----
SELECT * FROM t4
----
SELECT * FROM t5
----
SELECT * FROM t6
----
SELECT * FROM t7
----
SELECT * FROM t8
----
SELECT * FROM t9
----
CREATE INDEX t1i0 ON t1(a1,b1,c1,d1,e1,x1)
----
CREATE INDEX t1i1 ON t1(b1,c1,d1,e1,x1)
----
CREATE INDEX t1i2 ON t1(c1,d1,e1,x1)
----
CREATE INDEX t1i3 ON t1(d1,e1,x1)
----
CREATE INDEX t1i4 ON t1(e1,x1)
----
CREATE INDEX t2a2 ON t2(a2)
----
CREATE INDEX t2b2 ON t2(b2)
----
CREATE INDEX t2c2 ON t2(c2)
----
CREATE INDEX t2d2 ON t2(d2)
----
CREATE TABLE t1(
  a1 INTEGER PRIMARY KEY,
  b1 INTEGER,
  x1 VARCHAR(40)
)
----
INSERT INTO t1 VALUES(1,1,'table t1 row 1')
----
INSERT INTO t1 VALUES(2,9,'table t1 row 2')
----
INSERT INTO t1 VALUES(3,8,'table t1 row 3')
----
CREATE TABLE t2(
  a2 INTEGER PRIMARY KEY,
  b2 INTEGER,
  x2 VARCHAR(40)
)
----
CREATE TABLE t3(
  a3 INTEGER PRIMARY KEY,
  b3 INTEGER,
  x3 VARCHAR(40)
)
----
CREATE TABLE t4(
  a4 INTEGER PRIMARY KEY,
  b4 INTEGER,
  x4 VARCHAR(40)
)
----
CREATE TABLE t5(
  a5 INTEGER PRIMARY KEY,
  b5 INTEGER,
  x5 VARCHAR(40)
)
----
CREATE TABLE t6(
  a6 INTEGER PRIMARY KEY,
  b6 INTEGER,
  x6 VARCHAR(40)
)
----
CREATE TABLE t7(
  a7 INTEGER PRIMARY KEY,
  b7 INTEGER,
  x7 VARCHAR(40)
)
----
CREATE TABLE t8(
  a8 INTEGER PRIMARY KEY,
  b8 INTEGER,
  x8 VARCHAR(40)
)
----
CREATE TABLE t9(
  a9 INTEGER PRIMARY KEY,
  b9 INTEGER,
  x9 VARCHAR(40)
)
----
CREATE TABLE t10(
  a10 INTEGER PRIMARY KEY,
  b10 INTEGER,
  x10 VARCHAR(40)
)
----
CREATE TABLE t11(
  a11 INTEGER PRIMARY KEY,
  b11 INTEGER,
  x11 VARCHAR(40)
)
----
CREATE TABLE t12(
  a12 INTEGER PRIMARY KEY,
  b12 INTEGER,
  x12 VARCHAR(40)
)
----
CREATE TABLE t13(
  a13 INTEGER PRIMARY KEY,
  b13 INTEGER,
  x13 VARCHAR(40)
)
----
CREATE TABLE t14(
  a14 INTEGER PRIMARY KEY,
  b14 INTEGER,
  x14 VARCHAR(40)
)
----
CREATE TABLE t15(
  a15 INTEGER PRIMARY KEY,
  b15 INTEGER,
  x15 VARCHAR(40)
)
----
CREATE TABLE t16(
  a16 INTEGER PRIMARY KEY,
  b16 INTEGER,
  x16 VARCHAR(40)
)
----
CREATE TABLE t17(
  a17 INTEGER PRIMARY KEY,
  b17 INTEGER,
  x17 VARCHAR(40)
)
----
CREATE TABLE t18(
  a18 INTEGER PRIMARY KEY,
  b18 INTEGER,
  x18 VARCHAR(40)
)
----
CREATE TABLE t19(
  a19 INTEGER PRIMARY KEY,
  b19 INTEGER,
  x19 VARCHAR(40)
)
----
CREATE TABLE t20(
  a20 INTEGER PRIMARY KEY,
  b20 INTEGER,
  x20 VARCHAR(40)
)
----
CREATE TABLE t21(
  a21 INTEGER PRIMARY KEY,
  b21 INTEGER,
  x21 VARCHAR(40)
)
----
CREATE TABLE t22(
  a22 INTEGER PRIMARY KEY,
  b22 INTEGER,
  x22 VARCHAR(40)
)
----
CREATE TABLE t23(
  a23 INTEGER PRIMARY KEY,
  b23 INTEGER,
  x23 VARCHAR(40)
)
----
CREATE TABLE t24(
  a24 INTEGER PRIMARY KEY,
  b24 INTEGER,
  x24 VARCHAR(40)
)
----
CREATE TABLE t25(
  a25 INTEGER PRIMARY KEY,
  b25 INTEGER,
  x25 VARCHAR(40)
)
----
CREATE TABLE t26(
  a26 INTEGER PRIMARY KEY,
  b26 INTEGER,
  x26 VARCHAR(40)
)
----
CREATE TABLE t27(
  a27 INTEGER PRIMARY KEY,
  b27 INTEGER,
  x27 VARCHAR(40)
)
----
