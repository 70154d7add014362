"""SQLAlchemy migration for the review loop's oracle (integration/promote_migration_test.go).

Usage: python3 sqlalchemy_migration.py URL
Migrates customers as an application's migration does without Alembic: the
ALTER TABLE through connection.execute(text(...)), then a backfill through
the ORM session (each UK customer gold, each DE customer silver), an edit, a
delete and new ORM objects, committed; and an edit rolled back. Prints what
it did.
"""
import sys

from sqlalchemy import Column, Integer, String, create_engine, select, text
from sqlalchemy.orm import Session, declarative_base

Base = declarative_base()


class Customer(Base):
    __tablename__ = "customers"
    id = Column(Integer, primary_key=True)
    name = Column(String(32), nullable=False)
    country = Column(String(2), nullable=False)
    loyalty_tier = Column(String(16))


def main():
    engine = create_engine(sys.argv[1], future=True)
    out = []
    with engine.begin() as c:
        c.execute(text("ALTER TABLE customers ADD COLUMN loyalty_tier VARCHAR(16) NULL"))
    with Session(engine) as s:
        for cust in s.execute(select(Customer).order_by(Customer.id)).scalars():
            tier = {"UK": "gold", "DE": "silver"}.get(cust.country)
            if tier:
                cust.loyalty_tier = tier
                out.append("backfilled %d %s" % (cust.id, tier))
        s.get(Customer, 2).name = "Bob Ltd"
        s.delete(s.get(Customer, 9))
        s.add_all([Customer(id=100 + i, name="new-%d" % i, country="FR", loyalty_tier="bronze") for i in range(3)])
        s.commit()
    with Session(engine) as s:
        s.get(Customer, 1).loyalty_tier = "platinum"
        s.flush()
        s.rollback()
    with engine.connect() as c:
        out.append("tiers: %s" % c.execute(text("SELECT COUNT(*) FROM customers WHERE loyalty_tier IS NOT NULL")).scalar())
    print("\n".join(out))


if __name__ == "__main__":
    main()
