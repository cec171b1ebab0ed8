"""Lab equipment beside the topologies: services flatfab's tests and demos run locally."""
