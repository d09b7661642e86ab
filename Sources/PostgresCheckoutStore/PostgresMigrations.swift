import Logging
import PostgresNIO

/// Every schema change, by name, in order. A migration, once shipped, is
/// never edited: a change is a new migration appended here.
///
/// They run on start, all in one transaction that first takes an advisory
/// lock named for the schema: hosts starting together wait for each other,
/// and the second finds the work done (its names in `schema_migration`). A
/// failed migration rolls back whole: no half-migrated schema.
///
/// Times are seconds since 1970 (`float8`), as the SQLite store keeps them;
/// every id, key and hash is `COLLATE "C"`, so they sort as bytes, as there.
/// Documents are `bytea`, replayed byte for byte.
enum PostgresMigrations {
    struct Migration {
        var name: String
        var statements: [String]
    }

    static let all: [Migration] = earlier + [oneReferenceOnePayment, merchantWebhooks, webhooksDeliveredAtOnce]

    /// v1 to v6, as they shipped.
    private static let earlier: [Migration] = [
        Migration(name: "v1: sessions, attempts, events, idempotency, webhooks, api keys", statements: [
            """
            CREATE TABLE session (
                id text COLLATE "C" PRIMARY KEY,
                status text NOT NULL,
                version bigint NOT NULL CHECK (version > 0),
                amount bigint NOT NULL,
                currency text NOT NULL,
                order_id text NOT NULL,
                created_at float8 NOT NULL,
                updated_at float8 NOT NULL,
                expires_at float8 NOT NULL,
                -- the number of the session's last event, kept by the commits that write them
                events bigint NOT NULL DEFAULT 0 CHECK (events >= 0),
                -- the session and its attempts as JSON: never an instrument, so no card data
                document bytea NOT NULL)
            """,
            "CREATE INDEX session_open_by_expiry ON session (expires_at) WHERE status = 'open'",
            // due_at: the next verify of a pending attempt, the lease end of a
            // processing one, the next check of a held operation; NULL once
            // nothing is due. claimed_*: which host's reconciliation holds it.
            """
            CREATE TABLE attempt (
                id text COLLATE "C" PRIMARY KEY,
                session_id text COLLATE "C" NOT NULL REFERENCES session (id),
                provider_id text NOT NULL,
                status text NOT NULL,
                due_at float8,
                claimed_until float8,
                claimed_by text)
            """,
            "CREATE INDEX attempt_by_session ON attempt (session_id)",
            "CREATE INDEX attempt_due ON attempt (due_at) WHERE due_at IS NOT NULL",
            """
            CREATE TABLE event (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                session_id text COLLATE "C" NOT NULL,
                number bigint NOT NULL CHECK (number > 0),
                at float8 NOT NULL,
                type text NOT NULL,
                attempt_id text,
                status text,
                provider_id text,
                amount bigint,
                currency text,
                detail text,
                CONSTRAINT event_number UNIQUE (session_id, number))
            """,
            """
            CREATE FUNCTION event_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$
            """,
            "CREATE TRIGGER event_no_update_or_delete BEFORE UPDATE OR DELETE ON event FOR EACH ROW EXECUTE FUNCTION event_is_append_only()",
            "CREATE TRIGGER event_no_truncate BEFORE TRUNCATE ON event FOR EACH STATEMENT EXECUTE FUNCTION event_is_append_only()",
            // Only for events of a session with no row (tools, not the engine).
            "CREATE TABLE event_counter (session_id text COLLATE \"C\" PRIMARY KEY, last bigint NOT NULL)",
            """
            CREATE TABLE idempotency (
                key text COLLATE "C" PRIMARY KEY,
                fingerprint text NOT NULL,
                -- NULL while the outcome of the request is not known yet
                body bytea,
                reference text,
                created_at float8 NOT NULL)
            """,
            """
            CREATE TABLE webhook (
                provider_id text COLLATE "C" NOT NULL,
                event_id text COLLATE "C" NOT NULL,
                received_at float8 NOT NULL,
                PRIMARY KEY (provider_id, event_id))
            """,
            // Only a hash of each secret, never the secret; revoked keys stay.
            """
            CREATE TABLE api_key (
                id text COLLATE "C" PRIMARY KEY,
                name text,
                mode text NOT NULL CHECK (mode IN ('test', 'live')),
                hash text COLLATE "C" NOT NULL UNIQUE,
                prefix text NOT NULL,
                created_at float8 NOT NULL,
                revoked_at float8)
            """,
        ]),
        // A commit in one round trip: the same writes as v1's statements, in
        // one function the commit calls as a single statement (its own
        // transaction). A conflict raises its own SQLSTATE, which undoes the
        // whole statement: GWSTL stale session, GWKEY key bound to another
        // request (or answered), GWWHK notification already applied.
        Migration(name: "v2: commits in one round trip (gateway_commit)", statements: [
            """
            CREATE FUNCTION gateway_commit(
                s_id text, s_status text, s_read_version bigint, s_amount bigint, s_currency text, s_order_id text,
                s_created_at float8, s_updated_at float8, s_expires_at float8, s_document bytea, s_events bigint,
                p_attempts jsonb, p_events jsonb,
                k_key text, k_fingerprint text, k_body bytea, k_reference text, k_created_at float8,
                w_provider text, w_event text, w_received_at float8)
            RETURNS bigint[] LANGUAGE plpgsql AS $$
            DECLARE
                own_last bigint;
                own_next bigint;
                other record;
                other_last bigint;
                starts jsonb := '{}';
                item jsonb;
                sid text;
                n bigint;
                numbers bigint[] := '{}';
            BEGIN
                IF w_provider IS NOT NULL THEN
                    INSERT INTO webhook (provider_id, event_id, received_at) VALUES (w_provider, w_event, w_received_at)
                        ON CONFLICT DO NOTHING;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'notification % of % already applied', w_event, w_provider USING ERRCODE = 'GWWHK';
                    END IF;
                END IF;
                IF s_id IS NOT NULL THEN
                    IF s_read_version = 0 THEN
                        INSERT INTO session (id, status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, events)
                            VALUES (s_id, s_status, 1, s_amount, s_currency, s_order_id, s_created_at, s_updated_at, s_expires_at, s_document, s_events)
                            ON CONFLICT (id) DO NOTHING
                            RETURNING events INTO own_last;
                    ELSE
                        UPDATE session SET status = s_status, version = s_read_version + 1, amount = s_amount, currency = s_currency,
                                order_id = s_order_id, created_at = s_created_at, updated_at = s_updated_at, expires_at = s_expires_at,
                                document = s_document, events = events + s_events
                            WHERE id = s_id AND version = s_read_version
                            RETURNING events INTO own_last;
                    END IF;
                    IF own_last IS NULL THEN
                        RAISE EXCEPTION 'session % is not at version %', s_id, s_read_version USING ERRCODE = 'GWSTL';
                    END IF;
                    IF s_events > 0 THEN
                        PERFORM pg_notify('gateway_events', s_id || ':' || own_last);
                    END IF;
                    own_next := own_last - s_events + 1;
                    INSERT INTO attempt (id, session_id, provider_id, status, due_at)
                        SELECT a->>0, s_id, a->>1, a->>2, (a->>3)::float8 FROM jsonb_array_elements(p_attempts) AS a
                        ON CONFLICT (id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, claimed_until = NULL, claimed_by = NULL
                        WHERE attempt.status IS DISTINCT FROM excluded.status OR attempt.due_at IS DISTINCT FROM excluded.due_at;
                END IF;
                -- Events of other sessions than the change's own (tools write
                -- these, not the engine): each session's count first.
                FOR other IN
                    SELECT e->>0 AS session_id, count(*) AS events FROM jsonb_array_elements(p_events) AS e
                    WHERE s_id IS NULL OR e->>0 <> s_id GROUP BY 1 ORDER BY 1
                LOOP
                    other_last := NULL;
                    UPDATE session SET events = events + other.events WHERE id = other.session_id RETURNING events INTO other_last;
                    IF other_last IS NULL THEN
                        INSERT INTO event_counter (session_id, last) VALUES (other.session_id, other.events)
                            ON CONFLICT (session_id) DO UPDATE SET last = event_counter.last + excluded.last
                            RETURNING last INTO other_last;
                    END IF;
                    PERFORM pg_notify('gateway_events', other.session_id || ':' || other_last);
                    starts := starts || jsonb_build_object(other.session_id, other_last - other.events + 1);
                END LOOP;
                FOR item IN SELECT value FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(value, position) ORDER BY position LOOP
                    sid := item->>0;
                    IF sid = s_id THEN
                        n := own_next;
                        own_next := own_next + 1;
                    ELSE
                        n := (starts->>sid)::bigint;
                        starts := starts || jsonb_build_object(sid, n + 1);
                    END IF;
                    INSERT INTO event (session_id, number, at, type, attempt_id, status, provider_id, amount, currency, detail)
                        VALUES (sid, n, (item->>1)::float8, item->>2, item->>3, item->>4, item->>5, (item->>6)::bigint, item->>7, item->>8);
                    numbers := numbers || n;
                END LOOP;
                IF k_key IS NOT NULL THEN
                    INSERT INTO idempotency (key, fingerprint, body, reference, created_at)
                        VALUES (k_key, k_fingerprint, k_body, k_reference, k_created_at)
                        ON CONFLICT (key) DO UPDATE SET body = excluded.body, reference = excluded.reference
                        WHERE idempotency.body IS NULL AND idempotency.fingerprint = excluded.fingerprint;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'idempotency key % is bound to another request, or answered', k_key USING ERRCODE = 'GWKEY';
                    END IF;
                END IF;
                RETURN numbers;
            END $$
            """,
        ]),
        // A session's document and a key's answer are a few kilobytes (an
        // answer holds the session's forms): past the default 2 kB a row is
        // compressed (pglz) on every write, the largest CPU cost of a commit.
        // Rows up to a page's size are kept as they are instead.
        Migration(name: "v3: documents and answers kept uncompressed up to a page", statements: [
            "ALTER TABLE session SET (toast_tuple_target = 8160)",
            "ALTER TABLE idempotency SET (toast_tuple_target = 8160)",
        ]),
        // The check of the idempotency fingerprint key every host must share
        // (SharedFingerprintKey): an HMAC under the key, never the key.
        Migration(name: "v4: the fingerprint key's check", statements: [
            "CREATE TABLE shared_key_check (name text PRIMARY KEY, value text NOT NULL)",
        ]),
        // Many commits in one round trip and one transaction (PostgresChange,
        // Batcher): each change is v2's gateway_commit in a block of its own
        // (a subtransaction), so a change refused (GWSTL, GWKEY, GWWHK) is
        // undone alone, answered as its SQLSTATE, and the others are written.
        // Any other error undoes the whole batch. A change's scalars are one
        // JSON array (nullable values have no array encoding of their own);
        // its document and its answer's body are the same position of two
        // bytea arrays (an empty one where the change has none).
        Migration(name: "v5: commits gathered in one round trip (gateway_commit_many)", statements: [
            """
            CREATE FUNCTION gateway_commit_many(p_items jsonb, p_documents bytea[], p_bodies bytea[])
            RETURNS TABLE (item_no integer, refusal text, numbers bigint[]) LANGUAGE plpgsql AS $$
            DECLARE
                item jsonb;
            BEGIN
                item_no := 0;
                FOR item IN SELECT value FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(value, ord) ORDER BY ord LOOP
                    item_no := item_no + 1;
                    BEGIN
                        numbers := gateway_commit(
                            item->>0, item->>1, (item->>2)::bigint, (item->>3)::bigint, item->>4, item->>5,
                            (item->>6)::float8, (item->>7)::float8, (item->>8)::float8,
                            CASE WHEN item->>0 IS NULL THEN NULL ELSE p_documents[item_no] END, (item->>9)::bigint,
                            item->10, item->11,
                            item->>12, item->>13, CASE WHEN (item->>14)::boolean THEN p_bodies[item_no] END, item->>15, (item->>16)::float8,
                            item->>17, item->>18, (item->>19)::float8);
                        refusal := NULL;
                    EXCEPTION WHEN SQLSTATE 'GWSTL' OR SQLSTATE 'GWKEY' OR SQLSTATE 'GWWHK' THEN
                        refusal := SQLSTATE;
                        numbers := NULL;
                    END;
                    RETURN NEXT;
                END LOOP;
            END $$
            """,
        ]),
        // A batch as one statement when it can be (migration v5 ran
        // v2's gateway_commit, ten statements or more, for each change:
        // most of a change's time in the database): every write is one
        // statement for the whole batch, and a change refused among them
        // undoes that statement (it ran in a subtransaction of its own) so
        // that the batch is written change by change as before (v5's
        // function, kept as gateway_commit_each), each refused or written
        // alone. Measured in BENCHMARKS.md.
        //
        // Its plans are kept by each connection, made once while the
        // tables may be nearly empty (a new database): a plan that scans
        // the session table whole, cheapest then, would be kept as it grows
        // and cost a batch more with every session written. So the function
        // plans without whole-table scans, hash or merge joins: the
        // session's update is a lookup by id for each change, in the batch's
        // order (by session id, as the store sorts it, so hosts still lock
        // sessions in one order), whatever the table's size when it was
        // planned (`PostgresBatchTests.aBatchNeverScansTheSessionTableWhole`).
        Migration(name: "v6: a batch of commits in one statement when none is refused", statements: [
            "ALTER FUNCTION gateway_commit_many(jsonb, bytea[], bytea[]) RENAME TO gateway_commit_each",
            """
            CREATE FUNCTION gateway_commit_many(p_items jsonb, p_documents bytea[], p_bodies bytea[])
            RETURNS TABLE (item_no integer, refusal text, numbers bigint[]) LANGUAGE plpgsql
            SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
            DECLARE
                together boolean;
                lasts bigint[];
                counts bigint[];
            BEGIN
                -- Together when no session, key or notification comes twice and every
                -- event is its change's own session's, counted as its own (the
                -- engine's changes always).
                SELECT count(v->>0) = count(DISTINCT v->>0) AND count(v->>12) = count(DISTINCT v->>12)
                       AND count(v->>17) = count(DISTINCT CASE WHEN v->>17 IS NOT NULL THEN jsonb_build_array(v->17, v->18) END)
                       AND coalesce(bool_and(NOT EXISTS (SELECT FROM jsonb_array_elements(v->11) AS e WHERE e->>0 IS DISTINCT FROM v->>0)
                                             AND (v->>0 IS NULL OR (v->>9)::bigint = jsonb_array_length(v->11))), true)
                    INTO together FROM jsonb_array_elements(p_items) AS t(v);
                IF together THEN
                    -- All in one statement, in one subtransaction: each write matches
                    -- a row for every change unless one is refused (GWSTL, GWKEY or
                    -- GWWHK in v2's terms); then this is undone and the changes are
                    -- written one by one below, each refused or written alone.
                    BEGIN
                        WITH i AS MATERIALIZED (
                            SELECT ord::integer AS n, v->>0 AS sid, (v->>2)::bigint AS rv, (v->>9)::bigint AS events, v AS x
                            FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(v, ord)),
                        hooks AS (
                            INSERT INTO webhook (provider_id, event_id, received_at)
                            SELECT x->>17, x->>18, (x->>19)::float8 FROM i WHERE x->>17 IS NOT NULL
                            ON CONFLICT DO NOTHING RETURNING 1),
                        created AS (
                            INSERT INTO session (id, status, version, amount, currency, order_id, created_at, updated_at, expires_at, document, events)
                            SELECT sid, x->>1, 1, (x->>3)::bigint, x->>4, x->>5, (x->>6)::float8, (x->>7)::float8, (x->>8)::float8,
                                   p_documents[n], events
                            FROM i WHERE sid IS NOT NULL AND rv = 0
                            ON CONFLICT (id) DO NOTHING RETURNING id, events AS last),
                        updated AS (
                            UPDATE session SET status = i.x->>1, version = i.rv + 1, amount = (i.x->>3)::bigint, currency = i.x->>4,
                                    order_id = i.x->>5, created_at = (i.x->>6)::float8, updated_at = (i.x->>7)::float8,
                                    expires_at = (i.x->>8)::float8, document = p_documents[i.n], events = session.events + i.events
                            FROM i WHERE i.rv > 0 AND session.id = i.sid AND session.version = i.rv
                            RETURNING session.id, session.events AS last),
                        written AS (SELECT * FROM created UNION ALL SELECT * FROM updated),
                        attempts AS (
                            INSERT INTO attempt (id, session_id, provider_id, status, due_at)
                            SELECT a->>0, i.sid, a->>1, a->>2, (a->>3)::float8 FROM i JOIN written AS w ON w.id = i.sid, jsonb_array_elements(i.x->10) AS a
                            ON CONFLICT (id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, claimed_until = NULL, claimed_by = NULL
                            WHERE attempt.status IS DISTINCT FROM excluded.status OR attempt.due_at IS DISTINCT FROM excluded.due_at),
                        logged AS (
                            INSERT INTO event (session_id, number, at, type, attempt_id, status, provider_id, amount, currency, detail)
                            SELECT i.sid, w.last - i.events + e.k, (e.v->>1)::float8, e.v->>2, e.v->>3, e.v->>4, e.v->>5, (e.v->>6)::bigint, e.v->>7, e.v->>8
                            FROM i JOIN written AS w ON w.id = i.sid, jsonb_array_elements(i.x->11) WITH ORDINALITY AS e(v, k)),
                        keys AS (
                            INSERT INTO idempotency (key, fingerprint, body, reference, created_at)
                            SELECT x->>12, x->>13, CASE WHEN (x->>14)::boolean THEN p_bodies[n] END, x->>15, (x->>16)::float8
                            FROM i WHERE x->>12 IS NOT NULL
                            ON CONFLICT (key) DO UPDATE SET body = excluded.body, reference = excluded.reference
                            WHERE idempotency.body IS NULL AND idempotency.fingerprint = excluded.fingerprint
                            RETURNING 1),
                        -- Sent at COMMIT, as v2's: read below so that it runs.
                        notified AS (SELECT pg_notify('gateway_events', w.id || ':' || w.last) FROM i JOIN written AS w ON w.id = i.sid WHERE i.events > 0)
                        -- Each change's session's last event number (NULL: no
                        -- session) and its own events' count; no row at all
                        -- when a write matched fewer rows than changes.
                        SELECT array_agg(w.last ORDER BY i.n), array_agg(i.events ORDER BY i.n)
                        INTO lasts, counts
                        FROM i LEFT JOIN written AS w ON w.id = i.sid
                        WHERE (SELECT count(*) FROM hooks) = (SELECT count(*) FROM i WHERE x->>17 IS NOT NULL)
                          AND (SELECT count(*) FROM written) = (SELECT count(sid) FROM i)
                          AND (SELECT count(*) FROM keys) = (SELECT count(*) FROM i WHERE x->>12 IS NOT NULL)
                          AND (SELECT count(*) FROM notified) >= 0;
                        IF lasts IS NULL THEN
                            RAISE EXCEPTION 'a change of the batch is refused' USING ERRCODE = 'GWFST';
                        END IF;
                        RETURN QUERY SELECT t.k::integer, NULL::text,
                            CASE WHEN t.last IS NULL THEN '{}'::bigint[] ELSE ARRAY(SELECT generate_series(t.last - t.c + 1, t.last)) END
                            FROM unnest(lasts, counts) WITH ORDINALITY AS t(last, c, k);
                        RETURN;
                    EXCEPTION WHEN SQLSTATE 'GWFST' THEN
                        NULL;
                    END;
                END IF;
                -- One by one: v5's function, as it was.
                RETURN QUERY SELECT * FROM gateway_commit_each(p_items, p_documents, p_bodies);
            END $$
            """,
        ]),
    ]

    /// One provider reference is one payment: an attempt's provider
    /// reference (the 5th element of an attempt in a change) is written
    /// with it, unique per provider among attempts neither failed nor
    /// cancelled. The commit functions are v2's, v5's and v6's with only
    /// that changed (``edited(_:_:)`` spells out the changes): an attempt
    /// whose reference another holds refuses its change with GWREF
    /// (StoreConflict.referenceHeld; caught once per change, in
    /// gateway_commit_each, by the index's name), undoing that change alone;
    /// a batch written in one statement that meets one is written change by
    /// change, as for any other refusal. Attempts written before have no
    /// reference here (their documents keep it).
    private static let oneReferenceOnePayment = Migration(name: "v7: one provider reference, one payment", statements: [
        "ALTER TABLE attempt ADD COLUMN provider_reference text COLLATE \"C\"",
        // Attempts written before, from their sessions' documents (one with
        // U+0000 in it, which jsonb cannot hold, is left as it is); two live
        // or paid attempts of one provider that already share a reference
        // (the defect this closes) keep none here, as in the SQLite store.
        """
        UPDATE attempt SET provider_reference = found.reference
        FROM (SELECT s.id AS session_id, e->>'id' AS attempt_id, e->>'providerReference' AS reference
              FROM session AS s, jsonb_array_elements(convert_from(s.document, 'UTF8')::jsonb -> 'attempts') AS e
              WHERE position('\\u0000' IN convert_from(s.document, 'UTF8')) = 0) AS found
        WHERE found.session_id = attempt.session_id AND found.attempt_id = attempt.id AND found.reference IS NOT NULL
        """,
        """
        UPDATE attempt SET provider_reference = NULL
        WHERE status NOT IN ('failed', 'cancelled') AND (provider_id, provider_reference) IN (
            SELECT provider_id, provider_reference FROM attempt
            WHERE provider_reference IS NOT NULL AND status NOT IN ('failed', 'cancelled')
            GROUP BY provider_id, provider_reference HAVING count(*) > 1)
        """,
        """
        CREATE UNIQUE INDEX attempt_provider_reference ON attempt (provider_id, provider_reference)
            WHERE provider_reference IS NOT NULL AND status NOT IN ('failed', 'cancelled')
        """,
        // A reference once written is never cleared: a change without one
        // (a host of the previous version, during a rolling upgrade) keeps it.
        edited(earlier[1].statements[0], [
            ("CREATE FUNCTION gateway_commit(", "CREATE OR REPLACE FUNCTION gateway_commit("),
            ("""
                    INSERT INTO attempt (id, session_id, provider_id, status, due_at)
                        SELECT a->>0, s_id, a->>1, a->>2, (a->>3)::float8 FROM jsonb_array_elements(p_attempts) AS a
                        ON CONFLICT (id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, claimed_until = NULL, claimed_by = NULL
                        WHERE attempt.status IS DISTINCT FROM excluded.status OR attempt.due_at IS DISTINCT FROM excluded.due_at;
            """, """
                    INSERT INTO attempt (id, session_id, provider_id, status, due_at, provider_reference)
                        SELECT a->>0, s_id, a->>1, a->>2, (a->>3)::float8, a->>4 FROM jsonb_array_elements(p_attempts) AS a
                        ON CONFLICT (id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, claimed_until = NULL, claimed_by = NULL,
                            provider_reference = coalesce(excluded.provider_reference, attempt.provider_reference)
                        WHERE attempt.status IS DISTINCT FROM excluded.status OR attempt.due_at IS DISTINCT FROM excluded.due_at
                           OR (excluded.provider_reference IS NOT NULL AND attempt.provider_reference IS DISTINCT FROM excluded.provider_reference);
            """),
        ]),
        // The reference's index refuses a change: GWREF for it alone. Any
        // other unique violation fails the batch, as before.
        edited(earlier[4].statements[0], [
            ("CREATE FUNCTION gateway_commit_many(", "CREATE OR REPLACE FUNCTION gateway_commit_each("),
            ("DECLARE\n    item jsonb;\n", "DECLARE\n    item jsonb;\n    violated text;\n"),
            ("            numbers := NULL;\n        END;\n",
             "            numbers := NULL;\n"
                + "        WHEN unique_violation THEN\n"
                + "            GET STACKED DIAGNOSTICS violated = CONSTRAINT_NAME;\n"
                + "            IF violated IS DISTINCT FROM 'attempt_provider_reference' THEN\n"
                + "                RAISE;\n"
                + "            END IF;\n"
                + "            refusal := 'GWREF';\n"
                + "            numbers := NULL;\n"
                + "        END;\n"),
        ]),
        edited(earlier[5].statements[1], [
            ("CREATE FUNCTION gateway_commit_many(", "CREATE OR REPLACE FUNCTION gateway_commit_many("),
            ("""
                            INSERT INTO attempt (id, session_id, provider_id, status, due_at)
                            SELECT a->>0, i.sid, a->>1, a->>2, (a->>3)::float8 FROM
            """, """
                            INSERT INTO attempt (id, session_id, provider_id, status, due_at, provider_reference)
                            SELECT a->>0, i.sid, a->>1, a->>2, (a->>3)::float8, a->>4 FROM
            """),
            ("""
                            ON CONFLICT (id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, claimed_until = NULL, claimed_by = NULL
                            WHERE attempt.status IS DISTINCT FROM excluded.status OR attempt.due_at IS DISTINCT FROM excluded.due_at),
            """, """
                            ON CONFLICT (id) DO UPDATE SET status = excluded.status, due_at = excluded.due_at, claimed_until = NULL, claimed_by = NULL,
                                provider_reference = coalesce(excluded.provider_reference, attempt.provider_reference)
                            WHERE attempt.status IS DISTINCT FROM excluded.status OR attempt.due_at IS DISTINCT FROM excluded.due_at
                               OR (excluded.provider_reference IS NOT NULL AND attempt.provider_reference IS DISTINCT FROM excluded.provider_reference)),
            """),
            ("EXCEPTION WHEN SQLSTATE 'GWFST' THEN", "EXCEPTION WHEN SQLSTATE 'GWFST' OR unique_violation THEN"),
        ]),
    ])

    /// Merchants' webhooks (``WebhookStore``): the feed's order, endpoints,
    /// deliveries.
    ///
    /// The outbox is the event log (written with the change it reports). Its
    /// `id` is no commit order here: several hosts write at once, and a
    /// transaction that took a lower id may commit after one that took a
    /// higher. So each event records the id of the transaction that wrote it
    /// (`tx`, the column's default: the commit functions, which name the
    /// columns they write, are unchanged, and so are those of a host of the
    /// previous version during a rolling upgrade), and the feed goes by
    /// `(tx, id)`, holding back every event of a transaction at or above the
    /// oldest one still running (Webhooks.swift says why that never skips).
    /// Events written before have `tx` 0: before every endpoint's cursor.
    ///
    /// Adding the column is no rewrite (a constant default) and fires none
    /// of the event log's triggers (row triggers on UPDATE and DELETE, a
    /// statement trigger on TRUNCATE); the feed's index is built in the
    /// migrations' transaction, so commits wait while it reads the log once.
    ///
    /// An endpoint's cursor is where its fan-out stands; a delivery is one
    /// event for one endpoint, its body written once. Secrets are sealed
    /// (AES-GCM under a key outside the database), as in the SQLite store,
    /// whose tables these mirror.
    private static let merchantWebhooks = Migration(name: "v8: merchant webhooks: the feed's order, endpoints, deliveries", statements: [
        "ALTER TABLE event ADD COLUMN tx xid8 NOT NULL DEFAULT '0'",
        "ALTER TABLE event ALTER COLUMN tx SET DEFAULT pg_current_xact_id()",
        "CREATE INDEX event_feed ON event (tx, id)",
        """
        CREATE TABLE webhook_endpoint (
            id text COLLATE "C" PRIMARY KEY,
            url text NOT NULL,
            mode text NOT NULL CHECK (mode IN ('test', 'live')),
            -- the event types it receives, comma separated; NULL: all
            types text,
            description text,
            signing text NOT NULL CHECK (signing IN ('v1', 'v1a')),
            secret bytea NOT NULL,
            public_key text,
            previous_secret bytea,
            previous_until float8,
            state text NOT NULL CHECK (state IN ('enabled', 'disabled')),
            state_reason text,
            created_at float8 NOT NULL,
            removed_at float8,
            -- where its fan-out stands in the feed: (event.tx, event.id)
            cursor_tx xid8 NOT NULL,
            cursor_row bigint NOT NULL)
        """,
        """
        CREATE TABLE webhook_delivery (
            endpoint_id text COLLATE "C" NOT NULL REFERENCES webhook_endpoint (id),
            session_id text COLLATE "C" NOT NULL,
            number bigint NOT NULL,
            cursor_tx xid8 NOT NULL,
            cursor_row bigint NOT NULL,
            type text NOT NULL,
            body bytea NOT NULL,
            state text NOT NULL CHECK (state IN ('pending', 'delivered', 'abandoned')),
            tries bigint NOT NULL,
            queued_at float8 NOT NULL,
            due_at float8 NOT NULL,
            failing_since float8,
            last_error text,
            delivered_at float8,
            claimed_by text COLLATE "C",
            claimed_until float8,
            PRIMARY KEY (endpoint_id, session_id, number))
        """,
        // The claim's order: due first, then the feed's.
        "CREATE INDEX webhook_delivery_due ON webhook_delivery (due_at, cursor_tx, cursor_row) WHERE state = 'pending'",
        "CREATE INDEX webhook_delivery_feed ON webhook_delivery (endpoint_id, cursor_tx, cursor_row)",
    ])

    /// Webhooks delivered at once: a healthy endpoint's events are sent as
    /// its fan-out reads them and only counted on its row
    /// (`delivered_count`, `last_delivered_at`); a delivery row is written
    /// for what was not delivered. One host at a time fans an endpoint out
    /// (`fanout_by` until `fanout_until`). A replay reaches back to where
    /// the endpoint's feed began (`start_*`).
    ///
    /// An endpoint written before starts just before its first delivery
    /// kept (until now every event it was sent had one), or at its cursor
    /// when it has none. A new endpoint's start defaults to the feed's end
    /// as the row is written, as its cursor is set (Webhooks.swift), so one
    /// registered by a host of the previous version during a rolling upgrade
    /// (which names only the columns it knows) gets the start it would get
    /// here.
    private static let webhooksDeliveredAtOnce = Migration(name: "v9: webhooks: delivered at once, fan-out lease, feed start", statements: [
        "ALTER TABLE webhook_endpoint ADD COLUMN delivered_count bigint NOT NULL DEFAULT 0",
        "ALTER TABLE webhook_endpoint ADD COLUMN last_delivered_at float8",
        "ALTER TABLE webhook_endpoint ADD COLUMN fanout_by text COLLATE \"C\"",
        "ALTER TABLE webhook_endpoint ADD COLUMN fanout_until float8",
        "ALTER TABLE webhook_endpoint ADD COLUMN start_tx xid8",
        "ALTER TABLE webhook_endpoint ADD COLUMN start_row bigint",
        "UPDATE webhook_endpoint SET start_tx = cursor_tx, start_row = cursor_row",
        """
        UPDATE webhook_endpoint AS e SET start_tx = earliest.cursor_tx, start_row = earliest.cursor_row - 1
        FROM (SELECT DISTINCT ON (endpoint_id) endpoint_id, cursor_tx, cursor_row FROM webhook_delivery
              ORDER BY endpoint_id, cursor_tx, cursor_row) AS earliest
        WHERE earliest.endpoint_id = e.id
        """,
        "ALTER TABLE webhook_endpoint ALTER COLUMN start_tx SET NOT NULL, ALTER COLUMN start_row SET NOT NULL",
        "ALTER TABLE webhook_endpoint ALTER COLUMN start_tx SET DEFAULT pg_snapshot_xmin(pg_current_snapshot()), ALTER COLUMN start_row SET DEFAULT 0",
    ])

    /// `sql` with each edit's text replaced: a later migration's function
    /// derived from an earlier one's (which is never edited itself), so that
    /// it spells out only what changed. Each text must occur exactly once; a
    /// mistake here stops the process at the first store opened (every
    /// PostgreSQL test opens one).
    static func edited(_ sql: String, _ edits: [(String, String)]) -> String {
        var result = sql
        for (old, new) in edits {
            let found = result.ranges(of: old)
            precondition(found.count == 1, "PostgresMigrations.edited: \(found.count) occurrences of \(old.prefix(80))")
            result.replaceSubrange(found[0], with: new)
        }
        return result
    }

    /// Applies the migrations `connection`'s schema lacks; answers every
    /// applied name, in order. Every statement with a value is a named one
    /// of ``SQL``; a migration's DDL has no value and runs once, through the
    /// extended protocol as an unnamed statement.
    static func migrate(_ connection: PostgresConnection, schema: String, logger: Logger) async throws -> [String] {
        try await connection.withTransaction(logger: logger) { connection in
            _ = try await connection.rows(SQL.MigrationLock.self, .text(schema), logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS schema_migration (position integer PRIMARY KEY, name text NOT NULL UNIQUE, applied_at timestamptz NOT NULL DEFAULT now())", logger: logger)
            var applied: [String] = []
            for row in try await connection.rows(SQL.AppliedMigrations.self, logger: logger) {
                applied.append(try row.decode(String.self))
            }
            for (position, migration) in all.enumerated() where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                _ = try await connection.rows(SQL.RecordMigration.self, .int(Int64(position + 1)), .text(migration.name), logger: logger)
                logger.info("PostgreSQL store: migration applied: \(migration.name)")
                applied.append(migration.name)
            }
            return applied
        }
    }
}
