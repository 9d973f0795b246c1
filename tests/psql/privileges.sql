-- Roles and privileges as psql shows them: \du lists roles and their
-- attributes, \dp the access privileges of tables and views, \l those of
-- databases.
CREATE USER alice CREATEDB;
CREATE ROLE readers;
GRANT readers TO alice;
CREATE TABLE notes (id Int64, body Utf8, PRIMARY KEY (id));
CREATE TABLE drafts (id Int64, PRIMARY KEY (id));
CREATE VIEW note_ids AS SELECT id FROM notes;
GRANT SELECT, INSERT ON notes TO alice WITH GRANT OPTION;
GRANT SELECT ON notes TO readers;
GRANT SELECT ON note_ids TO PUBLIC;
\du
\dp
CREATE DATABASE shared;
REVOKE CONNECT ON DATABASE shared FROM PUBLIC;
GRANT CONNECT ON DATABASE shared TO alice;
\l shared
SELECT has_table_privilege('alice', 'notes', 'SELECT WITH GRANT OPTION') AS grantable,
       has_table_privilege('alice', 'drafts', 'SELECT') AS drafts,
       pg_has_role('alice', 'readers', 'MEMBER') AS member;
