"""The runtime's tables. Projections put their tables on the same ``metadata`` so one Alembic
history (arena_runtime/sql/migrations) and ``arena rebuild`` see all of them."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Integer, MetaData, PrimaryKeyConstraint, String, Table

# Stable constraint names, so migrations can refer to them on every database.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

# Kafka allows topic names of up to 249 characters.
TOPIC_LENGTH = 249

#: Per projection and partition, the offset of the next record to apply. Written in the same
#: transaction as the projection's own rows, so the two can never disagree.
projection_offsets = Table(
    "projection_offsets",
    metadata,
    Column("projection", String(200), nullable=False),
    Column("topic", String(TOPIC_LENGTH), nullable=False),
    Column("partition", Integer, nullable=False),
    Column("next_offset", BigInteger, nullable=False),
    PrimaryKeyConstraint("projection", "topic", "partition"),
)
