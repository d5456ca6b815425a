# The agent's development environment: Node.js 18 (Debian bookworm) + npm + the PostgreSQL client.
# No application code: the agent builds the system in /app.
FROM saasbench/base:bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      nodejs npm postgresql-client ca-certificates curl procps \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
CMD ["sleep", "infinity"]
