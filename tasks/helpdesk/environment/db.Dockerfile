# PostgreSQL 15 on the local Debian bookworm base image (no registry needed).
FROM saasbench/base:bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
COPY db-entrypoint.sh /usr/local/bin/db-entrypoint.sh
RUN chmod 0755 /usr/local/bin/db-entrypoint.sh \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/db-entrypoint.sh"]
