import AppleDeviceCheckClient
import DeviceCheckModel
import FoundationEssentials
public import HTTPServer
import Mechanisms
import Policy
import Ledger
import TokenSigning
import TwoBitsCrypto
public import UseCases
import WireVocabulary

/// The TwoBits service: configuration in, an HTTP API out.
///
/// Wires the layers together: the Apple client (signing with the team key), the ledger, the bit
/// policy and the fallback-token issuer, and the controllers that expose them over HTTP.
public final class TwoBitsService: Sendable {
    public let configuration: ServiceConfiguration
    public let metrics: MetricsRegistry
    public let routes: RouteTable
    let logger: LogWriter
    let apple: any DeviceCheckAPI
    let ledger: any Ledger
    let developerTokens: DeveloperTokenProvider
    /// The device's bits at Apple under the configured rules (the audited writes, their retried resolutions).
    let deviceBits: DeviceBits
    /// Keyed promotion claims; it keeps the answers an outage of the ledger kept from being stored.
    let claims: ClaimService
    /// The fallback-token use cases; nil when the configuration has no `tokens` section.
    let tokenExchange: TokenExchangeService?
    let debugSecrets: DebugSecretService?
    let readinessCheck: ReadinessCheck
    /// The console overview's figures, counted in memory and flushed to the ledger every `statisticsFlushSeconds`.
    let statistics = StatisticsRecorder()
    static let statisticsFlushSeconds = 10
    /// The live replica count the rate limits are shared by, asked of the ledger every second.
    let replicas: LiveReplicas
    /// Renews Apple's receipts of attested keys (the risk metric); nil with App Attest, its receipts, or a
    /// renewer off.
    let receiptRefresher: ReceiptRefreshRunner?
    /// The background loops (`backgroundServices`), started after the port opens and stopped, last started
    /// first, after the server's own shutdown and before the ledger closes.
    private let background: ServiceGroup
    private let server: HTTPServer<RequestContext>

    /// Builds every component; fails with an error naming the configuration field at fault.
    /// `receiptRenewer`: renews App Attest receipts (`app_attest.receipts`); nil: at Apple (or the sandbox), verified.
    public init(configuration: ServiceConfiguration, logger: LogWriter = LogWriter(),
                receiptRenewer: (any ReceiptRenewing)? = nil) throws(ConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        let metrics = MetricsRegistry()
        self.metrics = metrics

        let credentials: DeveloperCredentials
        do {
            credentials = try DeveloperCredentials(teamID: configuration.apple.teamID, keyID: configuration.apple.keyID,
                                                   privateKeyFile: configuration.apple.privateKeyFile)
        } catch {
            switch error {
            case .teamID: throw ConfigurationError("apple.team_id", error.description)
            case .keyID: throw ConfigurationError("apple.key_id", error.description)
            case .key: throw ConfigurationError("apple.private_key_file", error.description + " (download the DeviceCheck key from Certificates, Identifiers & Profiles > Keys)")
            }
        }
        let developerTokens = DeveloperTokenProvider(credentials: credentials)
        self.developerTokens = developerTokens
        let apple = AppleDeviceCheckClient(
            configuration: AppleClientConfiguration(
                baseURL: configuration.apple.effectiveBaseURL, timeoutMilliseconds: configuration.apple.timeoutMilliseconds,
                maxInFlight: configuration.apple.maxInFlight, maxConnections: configuration.apple.maxConnections,
                appAttestDataBaseURL: Self.appAttestDataBaseURL(configuration), caFile: configuration.apple.caFile),
            tokens: developerTokens, observer: AppleCallMetrics(registry: metrics, statistics: statistics, logger: logger))
        self.apple = apple

        let ledger: any Ledger
        do { ledger = try configuration.database.openLedger(pool: configuration.databasePool, observer: LedgerLatencyMetrics(registry: metrics)) } catch {
            switch configuration.database {
            case .sqlite: throw ConfigurationError("database", "\(error) (check the path and that its directory is writable)")
            case .postgres: throw ConfigurationError("database", "\(error) (\(configuration.database): check that PostgreSQL runs and accepts this role)")
            }
        }
        self.ledger = ledger
        let rules = BitRules(configuration: configuration.policy)
        let deviceBits = DeviceBits(rules: rules, apple: apple, ledger: ledger)
        self.deviceBits = deviceBits
        let admission = DeviceAdmission(bits: deviceBits, ledger: ledger)

        let events = UseCaseMetrics(registry: metrics, statistics: statistics, promotions: Set(configuration.policy.promotions.map(\.id)))
        var tokenExchange: TokenExchangeService?
        var debugSecrets: DebugSecretService?
        if configuration.tokens.enabled {
            let keys: KeyRing
            do { keys = try KeyRing(settings: configuration.tokens, ledger: ledger) } catch {
                throw ConfigurationError("tokens.keys_dir", error.description)
            }
            tokenExchange = TokenExchangeService(settings: configuration.tokens, environment: configuration.apple.environment,
                                                 admission: admission, ledger: ledger, keys: keys, events: events)
            debugSecrets = DebugSecretService(ledger: ledger, environment: configuration.apple.environment)
        }
        self.tokenExchange = tokenExchange
        self.debugSecrets = debugSecrets
        // The strong tier signs with the fallback tier's keys: one JWKS, tokens that name their tier.
        var appAttest: AppAttestExchange?
        // Apple's risk-metric service: the refresher's renewals, and the ATTEST receipt's at attestation (app_attest.risk).
        let renewer: (any ReceiptRenewing)? = configuration.appAttest.map { settings in
            receiptRenewer ?? AppleReceiptRenewer(apple: apple, verifier: settings.receiptVerifier)
        }
        if let settings = configuration.appAttest, let keys = tokenExchange?.keys {
            appAttest = AppAttestExchange(settings: settings, tokens: configuration.tokens, admission: admission, ledger: ledger, renewer: renewer,
                                          keys: keys, events: events)
        }
        // Exported at zero from the start, so that dashboards and the alert see the family (and the first count) at once.
        for outcome in ReceiptRefreshReport.Outcome.allCases { metrics.increment(.appAttestReceiptRefreshes, outcome.rawValue, by: 0) }
        // Each replica refreshes; the ledger's leases keep two from renewing one key.
        if let settings = configuration.appAttest, appAttest != nil, settings.receipts.enabled, let renewer {
            receiptRefresher = ReceiptRefreshRunner(settings: settings.receipts, store: ledger, renewer: renewer,
                                                    owner: "receipts-\(SecureRandom.base64URL(bytes: 9))",
                                                    onReport: Self.receiptReporter(metrics: metrics, logger: logger))
        } else {
            receiptRefresher = nil
        }

        var table = RouteTable()
        let readinessCheck = ReadinessCheck(ledger: ledger, developerTokens: developerTokens, keys: tokenExchange?.keys, logger: logger)
        self.readinessCheck = readinessCheck
        let gauges = ScrapeTimeGauges()
        gauges.add { metrics.set(.unsavedResolutions, to: Double(deviceBits.unsavedResolutionCount)) }
        if let keys = tokenExchange?.keys {
            gauges.add { metrics.set(.signingKeyAge, to: Date().timeIntervalSince(keys.issuer().key.createdAt).rounded()) }
        }
        // At zero from the start (also with App Attest off), so that the alert's series exists.
        metrics.set(.appAttestKeysMetricUnknown, to: 0)
        if let settings = configuration.appAttest, appAttest != nil {
            let unknown = UnknownMetricKeyCount(store: ledger, grace: settings.risk?.unknownGrace ?? RiskMetricPolicy.defaultUnknownGrace,
                                                activeWindow: settings.receipts.activeWindow)
            gauges.add { if let count = await unknown.read() { metrics.set(.appAttestKeysMetricUnknown, to: Double(count)) } }
        }
        HealthController(readinessCheck: readinessCheck, metrics: metrics, gauges: gauges).register(in: &table)
        DeviceController(admission: admission).register(in: &table)
        let promotions = PromotionService(bits: deviceBits)
        let claims = ClaimService(promotions: promotions, ledger: ledger, events: events)
        self.claims = claims
        PromotionController(promotions: promotions, claims: claims).register(in: &table)
        InstallController(installs: InstallService(bits: deviceBits, admission: admission), metrics: metrics).register(in: &table)
        AdminController(bans: BanService(bits: deviceBits), pendingOrders: PendingOrderService(rules: rules, ledger: ledger), metrics: metrics)
            .register(in: &table)
        AuditController(ledger: ledger).register(in: &table)
        OverviewController(statistics: statistics, ledger: ledger, keys: tokenExchange?.keys).register(in: &table)
        FallbackTokenController(exchange: tokenExchange, debugSecrets: debugSecrets).register(in: &table)
        let replicas = LiveReplicas()
        self.replicas = replicas
        AppAttestController(exchange: appAttest, replicas: replicas, receipts: ledger).register(in: &table)
        RequestProofController(proofs: appAttest.map(RequestProofService.init(exchange:))).register(in: &table)
        ConsoleController().register(in: &table)
        self.routes = table

        let pipeline = RequestPipeline(table: table, authenticator: ClientAuthenticator(clients: configuration.clients),
                                       limits: AppleCallLimits(configuration: configuration, replicas: replicas, metrics: metrics), metrics: metrics, logger: logger)
        var serverConfiguration = HTTPServerConfiguration(
            host: configuration.listenHost, port: configuration.listenPort, threads: configuration.server.threads,
            maxBodyBytes: 64 * 1024, requestDeadlineMilliseconds: configuration.server.requestDeadlineMilliseconds,
            maxConnections: configuration.server.maxConnections,
            receiveTimeoutMilliseconds: configuration.server.receiveTimeoutMilliseconds,
            maxConnectionsPerIP: configuration.server.maxConnectionsPerIP,
            reservedFileDescriptors: 128 + configuration.apple.maxConnections * configuration.server.threads)
        serverConfiguration.wakeCoalescingMicroseconds = configuration.server.wakeCoalescingMicroseconds
        // A proxy and TwoBits reading different copies would disagree on which claim a retry replays.
        serverConfiguration.singleValuedHeaders.insert("idempotency-key")
        // The pipeline is the server's edge (contexts, head stages, its own answers, the access log); rate
        // limits are middleware, the controllers the responder.
        server = HTTPServer(configuration: serverConfiguration, edge: pipeline, middleware: pipeline.middleware, responder: pipeline.responder)
        background = ServiceGroup(Self.backgroundServices(ledger: ledger, replicas: replicas, metrics: metrics, logger: logger, statistics: statistics,
                                                          deviceBits: deviceBits, claims: claims, receiptRefresher: receiptRefresher),
                                  onEvent: { event in
            guard case .failed(let name, let error) = event else { return }
            logger.log(.error, "a background service failed; the others run on", ["service": .string(name), "error": .string(error)])
        })
        // Weak: the server's handler reaches these gauges (pipeline → routes → health), so a strong capture is a cycle.
        gauges.add { [weak server = self.server] in
            guard let server else { return }
            metrics.set(.httpRequestsInFlight, to: Double(server.requestsInFlight))
            metrics.set(.httpMaxConnections, to: Double(server.limits.maxConnections))
        }
    }

    /// Starts listening, after settling what the ledger says the last process left unfinished.
    public func start() async throws(ConfigurationError) {
        try await prepareToServe()
        do { try server.start() } catch { throw ConfigurationError("listen", error.description) }
        await background.start()
        logger.log(.info, "listening", [
            "address": .string("\(configuration.listenHost):\(server.port)"),
            "apple": .string(configuration.apple.loggableBaseURL), "environment": .string(configuration.apple.environment.rawValue),
            "layout": .string(configuration.policy.layout.description), "database": .string(configuration.database.description),
            "open_files_limit": .int(server.limits.openFiles.soft), "max_connections": .int(server.limits.maxConnections),
            "max_connections_per_ip": .int(configuration.server.maxConnectionsPerIP),
            "wake_coalescing_us": .int(server.wakeCoalescingMicroseconds),
        ])
        logger.flush()
    }

    /// Starts as `start()` does but opens no socket: the server's event loops run, and requests come through
    /// `respond(to:)` (tests of the request pipeline apart from the HTTP edge; docs/testing.md).
    public func startInProcess() async throws(ConfigurationError) {
        try await prepareToServe()
        server.startInProcess()
        await background.start()
        logger.log(.info, "serving in process (no listening socket)", [
            "environment": .string(configuration.apple.environment.rawValue),
            "layout": .string(configuration.policy.layout.description), "database": .string(configuration.database.description),
        ])
        logger.flush()
    }

    /// The answer the HTTP server would send for `request` once its edge checks passed it: the same request
    /// pipeline (context, routing, authentication, checks, controller, error envelope, framing, access log and
    /// metrics), run on one of the server's event loops. Needs `startInProcess()` (else: 503 shutting_down).
    public func respond(to request: ServerRequest) async -> ServerResponse {
        await server.respond(to: request)
    }

    /// What both ways of starting do before serving.
    private func prepareToServe() async throws(ConfigurationError) {
        // A ledger that is only unreachable or busy for now (a PostgreSQL pool still opening its connections: after a
        // failover whose old primary, first host of the list, times out every connection attempt) is waited for, up
        // to 30 s, before the start fails; a refusal (`failed`) is not.
        let patience = ContinuousClock.now + .seconds(30)
        func transient(_ error: StorageError) async -> Bool {
            guard error.kind != .failed, ContinuousClock.now < patience else { return false }
            try? await Task.sleep(for: .milliseconds(500))
            return true
        }
        // Before serving: writes an earlier process left `pending` become `unknown` (docs/policy.md, "The audit trail").
        while true {
            do {
                let interrupted = try await deviceBits.reconcileInterruptedWrites()
                if interrupted > 0 { logger.log(.warning, "Apple writes interrupted by the last stop are audited unknown until their device token is seen again", ["count": .int(interrupted)]) }
                break
            } catch {
                guard case .storage(let e) = error else { break }
                if await transient(e) { continue }
                logger.log(.error, "could not reconcile interrupted Apple writes", ["detail": .string(e.message)])
                break
            }
        }
        if let keys = tokenExchange?.keys {
            while true {
                do throws(StorageError) {
                    try await keys.shareActivation()
                    break
                } catch {
                    if await transient(error) { continue }
                    throw ConfigurationError("database", "cannot record the signing key's activation: \(error.message)")
                }
            }
        }
        // Warnings come before the port opens, so a client (or a test) that sees the service ready has them in the log.
        for warning in configuration.operatorWarnings() { logger.log(.warning, warning.message, ["path": .string(warning.path)]) }
        if let debugSecrets, case let count = await debugSecrets.refusedByEnvironment(), count > 0 {
            logger.log(.warning, "debug secrets exist but are refused in production; delete them with DELETE /v1/admin/debug-secrets/{name}",
                       ["count": .int(count)])
        }
        await Self.countReplicas(ledger: ledger, replicas: replicas, metrics: metrics, logger: logger)
    }

    /// The loops beside the requests, in their start order (stopped in the reverse one): the replica count the
    /// limits follow; the retry of what an outage of the ledger kept from being saved (every second, and a last
    /// time at shutdown); the overview's counts (every 10 s, and a last flush at shutdown); the receipt refresher.
    static func backgroundServices(ledger: any Ledger, replicas: LiveReplicas, metrics: MetricsRegistry, logger: LogWriter,
                                   statistics: StatisticsRecorder, deviceBits: DeviceBits, claims: ClaimService,
                                   receiptRefresher: ReceiptRefreshRunner?) -> [BackgroundService] {
        @Sendable func count() async { await countReplicas(ledger: ledger, replicas: replicas, metrics: metrics, logger: logger) }
        @Sendable func retry() async {
            await deviceBits.retryUnsavedResolutions()
            await claims.retryUnsavedAnswers()
        }
        @Sendable func flush() async { await flushStatistics(statistics, to: ledger, logger: logger) }
        var services: [BackgroundService] = [
            .periodic(name: "replica counter", every: .seconds(1), count),
            .periodic(name: "resolution retrier", every: .seconds(1), retry, finish: retry),
            .periodic(name: "statistics flusher", every: .seconds(statisticsFlushSeconds), flush, finish: flush),
        ]
        if let receiptRefresher { services.append(BackgroundService(name: "receipt refresher", run: { await receiptRefresher.run() })) }
        return services
    }

    /// What `/readyz` would answer now.
    public func readiness() async -> Readiness { await readinessCheck.run() }

    /// The bound port.
    public var port: UInt16 { server.port }

    /// Stops accepting, lets running requests finish within the grace period, then stops.
    public func shutdown() async {
        logger.log(.info, "shutting down", ["in_flight": .int(server.requestsInFlight)])
        await server.shutdown(graceMilliseconds: configuration.server.shutdownGraceMilliseconds)
        // The refresher stops first; the overview's last flush, then the last retry of what the ledger refused.
        await background.shutdown()
        ledger.close()
        logger.log(.info, "stopped")
        logger.flush()
    }

    /// Counts each renewal; logs what an operator must see (an incorrect environment once, a 404, a refusal).
    /// Where receipts are renewed: on Apple's hosts, the fraud-metric host of the keys' environment
    /// (`app_attest.environment`, which may differ from DeviceCheck's `apple.environment`: a receipt sent to the
    /// other host is answered 400 Incorrect Environment); elsewhere (the sandbox) the Apple base URL itself.
    static func appAttestDataBaseURL(_ configuration: ServiceConfiguration) -> String? {
        let base = configuration.apple.effectiveBaseURL
        let apple = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard let keys = configuration.appAttest?.environment, AppleEnvironment.allCases.contains(where: { $0.baseURL == apple }) else { return nil }
        return (keys == .production ? AppleEnvironment.production : .development).appAttestDataBaseURL
    }

    static func receiptReporter(metrics: MetricsRegistry, logger: LogWriter) -> @Sendable (ReceiptRefreshReport) -> Void {
        { report in
            metrics.increment(.appAttestReceiptRefreshes, report.outcome.rawValue)
            guard report.log else { return }
            let level: LogWriter.Level = report.outcome == .incorrectEnvironment || report.outcome == .storageFailed ? .error : .warning
            var fields: [String: LogValue] = ["outcome": .string(report.outcome.rawValue), "key_id": .string(report.keyID)]
            if let detail = report.detail { fields["detail"] = .string(detail) }
            logger.log(level, "App Attest receipt refresh", fields)
        }
    }

    /// Asks the ledger how many replicas serve; while it cannot tell (PostgreSQL down), the last count stays.
    private static func countReplicas(ledger: any Ledger, replicas: LiveReplicas, metrics: MetricsRegistry, logger: LogWriter) async {
        guard let count = try? await ledger.liveReplicas() else { return }
        let before = replicas.count
        replicas.update(count)
        metrics.set(.liveReplicas, to: Double(replicas.count))
        if replicas.count != before {
            logger.log(.info, "live replicas counted; each takes its share of the rate limits", ["replicas": .int(replicas.count)])
        }
    }

    /// Adds the overview's counts to the ledger; counts a failed flush keeps are retried at the next.
    private static func flushStatistics(_ statistics: StatisticsRecorder, to ledger: any Ledger, logger: LogWriter) async {
        do throws(StorageError) { try await statistics.flush(to: ledger) } catch {
            logger.log(.warning, "the overview's figures could not be written; kept for the next try", ["detail": .string(error.message)])
        }
    }

    /// Reloads signing keys (SIGHUP): a rotated key starts signing.
    public func reloadKeys() async {
        guard let keys = tokenExchange?.keys else { return }
        do throws(SigningKeyError) {
            let reload = try await keys.reload()
            logger.log(.info, "signing keys reloaded", ["signing_kid": .string(reload.signingKID), "verifying": .int(reload.keyCount)])
        } catch {
            logger.log(.error, "signing keys not reloaded; the previous keys stay in use", ["error": .string(error.description)])
        }
    }
}
