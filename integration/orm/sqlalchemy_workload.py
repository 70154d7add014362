"""SQLAlchemy ORM workload for the sandbox tests (integration/orm_test.go).

Usage: python3 sqlalchemy_workload.py URL RUN
Prints a transcript of what it observed; the test compares the transcript of
a direct run with one through a sandbox.
"""
import sys

from sqlalchemy import (Column, ForeignKey, Integer, Numeric, String, create_engine, inspect, select,
                        text)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, declarative_base, relationship

Base = declarative_base()


class Author(Base):
    __tablename__ = "sa_authors"
    id = Column(Integer, primary_key=True)
    name = Column(String(64), unique=True, nullable=False)
    books = relationship("Book", back_populates="author", order_by="Book.title")


class Book(Base):
    __tablename__ = "sa_books"
    id = Column(Integer, primary_key=True)
    author_id = Column(Integer, ForeignKey("sa_authors.id"), nullable=False, index=True)
    title = Column(String(100), nullable=False)
    price = Column(Numeric(8, 2))
    author = relationship("Author", back_populates="books")


def main():
    url, run = sys.argv[1], int(sys.argv[2])
    engine = create_engine(url, future=True)
    out = []
    log = out.append
    log("tables before: %s" % sorted(inspect(engine).get_table_names()))
    Base.metadata.create_all(engine)
    Base.metadata.create_all(engine)  # idempotent
    insp = inspect(engine)
    log("tables: %s" % sorted(insp.get_table_names()))
    for c in insp.get_columns("sa_books"):
        log("books column %s %s nullable=%s" % (c["name"], c["type"], c["nullable"]))
    log("books indexes: %s" % sorted(i["name"] for i in insp.get_indexes("sa_books")))
    for fk in insp.get_foreign_keys("sa_books"):
        log("books fk %s -> %s.%s" % (fk["constrained_columns"], fk["referred_table"], fk["referred_columns"]))
    log("pk: %s" % insp.get_pk_constraint("sa_authors")["constrained_columns"])

    with Session(engine) as s:
        a = Author(name="writer-%d" % run, books=[Book(title="b1", price=10), Book(title="b2", price=12.5)])
        s.add(a)
        s.commit()
        log("author id>0: %s" % (a.id > 0))
        s.execute(text("UPDATE sa_books SET price = price * 2 WHERE author_id = :a AND title = 'b1'"), {"a": a.id})
        s.commit()
        got = s.execute(select(Author).where(Author.name == "writer-%d" % run)).scalar_one()
        for b in got.books:
            log("book %s %s" % (b.title, b.price))
    with Session(engine) as s:
        s.add(Book(author_id=1, title="rolled back", price=1))
        s.flush()
        s.rollback()
    with engine.connect() as c:
        log("rolled back rows: %s" % c.execute(text("SELECT COUNT(*) FROM sa_books WHERE title = 'rolled back'")).scalar())
    with Session(engine) as s:
        s.add(Author(name="writer-%d" % run))
        try:
            s.commit()
            log("duplicate: no error")
        except IntegrityError as e:
            log("duplicate: IntegrityError %s" % e.orig.args[0])
    with Session(engine) as s:
        s.add(Book(author_id=999999, title="orphan"))
        try:
            s.commit()
            log("orphan: no error")
        except IntegrityError as e:
            log("orphan: IntegrityError %s" % e.orig.args[0])
    with engine.begin() as c:
        c.execute(text("DELETE FROM sa_books WHERE title = 'b2'"))
    with engine.connect() as c:
        log("books left: %s" % c.execute(text("SELECT COUNT(*) FROM sa_books")).scalar())
    print("\n".join(out))


if __name__ == "__main__":
    main()
