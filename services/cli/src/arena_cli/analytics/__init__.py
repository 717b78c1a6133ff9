"""The analysts' tools behind `arena events` (docs/analytics.md): the catalogue of the topics,
tail, export to JSON Lines and Parquet, and the seeded simulation that gives them data.

Everything here reads the log through the EventLog interface, so it works alike on the embedded
log and on Kafka; pyarrow is imported only by what writes Parquet.
"""
