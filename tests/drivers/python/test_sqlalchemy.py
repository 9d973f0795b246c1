"""SQLAlchemy (Debian's python3-sqlalchemy, 1.4) over psycopg2 against
PivotDB, run by tests/drivers_test.go with the connection in PG* environment
variables: the ORM with autoincrement (serial) keys and a relationship,
Core's inserted_primary_key, and INSERT ... ON CONFLICT through the
PostgreSQL dialect. Prints one line per check; exits non-zero on the first
failure."""
import os
import sys

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session, declarative_base, foreign, relationship

Base = declarative_base()


class Author(Base):
    __tablename__ = "sa_author"
    id = sa.Column(sa.Integer, primary_key=True)
    name = sa.Column(sa.String(50), nullable=False)
    # PivotDB has no foreign keys: the join condition says which column
    # refers to which.
    books = relationship("Book", primaryjoin="Author.id == foreign(Book.author_id)", back_populates="author")


class Book(Base):
    __tablename__ = "sa_book"
    id = sa.Column(sa.BigInteger, primary_key=True)
    title = sa.Column(sa.String(100), nullable=False)
    author_id = sa.Column(sa.Integer, nullable=False)
    author = relationship("Author", primaryjoin="foreign(Book.author_id) == Author.id", back_populates="books")


def main():
    url = "postgresql+psycopg2://%s@%s:%s/%s?sslmode=disable" % (
        os.environ["PGUSER"], os.environ["PGHOST"], os.environ["PGPORT"], os.environ["PGDATABASE"])
    engine = sa.create_engine(url)
    Base.metadata.create_all(engine)
    with engine.connect() as conn:
        kinds = dict(conn.execute(sa.text(
            "SELECT relname, relkind FROM pg_class WHERE relname IN ('sa_author_id_seq', 'sa_book_id_seq')")).fetchall())
        assert kinds == {"sa_author_id_seq": "S", "sa_book_id_seq": "S"}, kinds
    print("ok create_all with serial keys")

    with Session(engine) as s:
        a = Author(name="Ursula")
        a.books = [Book(title="The Dispossessed"), Book(title="The Lathe of Heaven")]
        s.add(a)
        s.commit()
        assert a.id == 1, a.id
        assert sorted(b.id for b in a.books) == [1, 2], [b.id for b in a.books]
        b = Author(name="Stanisław")
        s.add(b)
        s.flush()
        assert b.id == 2, b.id
        s.commit()
    print("ok ORM autoincrement keys")

    with Session(engine) as s:
        ursula = s.query(Author).filter_by(name="Ursula").one()
        assert sorted(b.title for b in ursula.books) == ["The Dispossessed", "The Lathe of Heaven"]
        book = s.query(Book).filter_by(title="The Dispossessed").one()
        assert book.author.name == "Ursula"
    print("ok relationship")

    authors = Author.__table__
    with engine.begin() as conn:
        r = conn.execute(authors.insert().values(name="Italo"))
        assert r.inserted_primary_key == (3,), r.inserted_primary_key
        r = conn.execute(authors.insert().values(name="Jorge").returning(authors.c.id, authors.c.name))
        assert r.fetchall() == [(4, "Jorge")]
    print("ok inserted_primary_key and RETURNING")

    with engine.begin() as conn:
        stmt = pg_insert(authors).values(id=3, name="Italo Calvino")
        stmt = stmt.on_conflict_do_update(index_elements=[authors.c.id], set_={"name": stmt.excluded.name})
        conn.execute(stmt)
        conn.execute(pg_insert(authors).values(id=4, name="ignored").on_conflict_do_nothing())
        names = dict(conn.execute(sa.select(authors.c.id, authors.c.name).where(authors.c.id.in_([3, 4]))).fetchall())
        assert names == {3: "Italo Calvino", 4: "Jorge"}, names
    print("ok ON CONFLICT")

    # Reflection reads the catalog's arrays: get_pk_constraint unnests
    # pg_index.indkey beside generate_subscripts(indkey, 1).
    insp = sa.inspect(engine)
    pk = insp.get_pk_constraint("sa_book")
    assert pk["constrained_columns"] == ["id"], pk
    cols = [c["name"] for c in insp.get_columns("sa_book")]
    assert cols == [c.name for c in Book.__table__.columns], cols
    meta = sa.MetaData()
    meta.reflect(engine, only=["sa_author", "sa_book"])
    assert [c.name for c in meta.tables["sa_book"].primary_key] == ["id"], meta.tables["sa_book"].primary_key
    print("ok reflection")

    Base.metadata.drop_all(engine)
    with engine.connect() as conn:
        n = conn.execute(sa.text("SELECT count(*) FROM pg_class WHERE relkind = 'S' AND relname LIKE 'sa_%'")).scalar()
        assert n == 0, n
    print("ok drop_all drops the sequences")

    inspection(engine)


def inspection(engine):
    """sa.inspect(): the catalog queries SQLAlchemy's reflection sends
    (get_pk_constraint and MetaData.reflect: see main)."""
    with engine.begin() as conn:
        conn.execute(sa.text(
            "CREATE TABLE insp_parent (id Uint64, name varchar(20) NOT NULL, score Double DEFAULT 1.5, PRIMARY KEY (id))"))
        conn.execute(sa.text("CREATE UNIQUE INDEX insp_parent_name ON insp_parent (name)"))
        conn.execute(sa.text(
            "CREATE TABLE insp_child (id serial PRIMARY KEY, parent Uint64 REFERENCES insp_parent ON DELETE CASCADE, "
            "amount numeric(10,2), CHECK (amount > 0))"))
        conn.execute(sa.text("CREATE VIEW insp_view AS SELECT id, name FROM insp_parent"))
    insp = sa.inspect(engine)
    tables = insp.get_table_names()
    assert "insp_parent" in tables and "insp_child" in tables, tables
    assert "insp_view" in insp.get_view_names()
    assert "SELECT id, name FROM insp_parent" in insp.get_view_definition("insp_view")

    cols = {c["name"]: c for c in insp.get_columns("insp_parent")}
    # Uint64 is a domain over numeric(20,0): SQLAlchemy reflects the base.
    assert isinstance(cols["id"]["type"], sa.Numeric), cols["id"]
    assert isinstance(cols["name"]["type"], sa.String) and cols["name"]["type"].length == 20, cols["name"]
    assert cols["name"]["nullable"] is False, cols["name"]
    assert cols["score"]["default"] == "1.5", cols["score"]
    child = {c["name"]: c for c in insp.get_columns("insp_child")}
    assert child["id"]["autoincrement"] is True and "nextval" in child["id"]["default"], child["id"]
    assert child["amount"]["type"].precision == 10 and child["amount"]["type"].scale == 2, child["amount"]
    view_cols = [c["name"] for c in insp.get_columns("insp_view")]
    assert view_cols == ["id", "name"], view_cols
    print("ok inspect columns")

    idx = insp.get_indexes("insp_parent")
    assert [(i["name"], i["unique"], i["column_names"]) for i in idx] == [("insp_parent_name", True, ["name"])], idx
    fks = insp.get_foreign_keys("insp_child")
    assert len(fks) == 1 and fks[0]["referred_table"] == "insp_parent" and fks[0]["constrained_columns"] == ["parent"] \
        and fks[0]["referred_columns"] == ["id"] and fks[0]["options"].get("ondelete") == "CASCADE", fks
    checks = insp.get_check_constraints("insp_child")
    # The expression as PivotDB stores it (restored SQL, without spaces).
    assert [c["sqltext"].replace(" ", "") for c in checks] == ["amount>0"], checks
    print("ok inspect indexes, foreign keys and checks")
    with engine.begin() as conn:
        conn.execute(sa.text("DROP VIEW insp_view"))
        conn.execute(sa.text("DROP TABLE insp_child"))
        conn.execute(sa.text("DROP TABLE insp_parent"))


if __name__ == "__main__":
    main()
    print("sqlalchemy: all checks passed")
    sys.exit(0)
