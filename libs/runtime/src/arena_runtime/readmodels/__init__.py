"""The read models of ratings and matches: tables shared by the projections that write them
(the rating service's) and the queries the gateway's read API runs."""
