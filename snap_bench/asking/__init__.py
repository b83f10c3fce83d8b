"""One condition asked: the client, endpoints, keys, the scrubber, limits, stops, asking ahead, local servers."""
