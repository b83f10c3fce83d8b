"""What a session puts out, byte for byte: the request of a condition in its endpoint's dialect (built once, for
the asker to send and the recordings to look up), the scrubber every written string passes through, the
atomic write every file goes through, and the session end's files stopped between whole files by a later
Ctrl-C. Below the asking and the recordings; imports neither."""
