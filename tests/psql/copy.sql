-- COPY through psql: COPY ... FROM STDIN with the data in the script,
-- psql's \copy, COPY TO STDOUT in each text format, and errors with the
-- line in CONTEXT leaving nothing.
CREATE TABLE items (id Int64 NOT NULL, name Utf8, price Double, added Date, PRIMARY KEY (id));
COPY items (id, name, price, added) FROM STDIN;
1	apple	0.5	2024-01-01
2	pear, green	\N	2024-01-02
3	tab\there	1.25	\N
\.
\copy items from stdin with (format csv, header true)
id,name,price,added
4,"quoted ""name""",2,2024-02-29
5,,3.5,
\.
COPY items TO STDOUT;
COPY items TO STDOUT WITH CSV HEADER;
COPY items (id, name) TO STDOUT (FORMAT csv, DELIMITER '|', NULL 'NULL', FORCE_QUOTE *);
\copy (SELECT id, price * 2 AS double_price FROM items WHERE price IS NOT NULL ORDER BY id DESC) to stdout csv header
COPY items (id, name) FROM STDIN;
6	six
seven	7
\.
COPY items (id) FROM STDIN (FORMAT csv, FORCE_QUOTE (id));
SELECT count(*) FROM items;
