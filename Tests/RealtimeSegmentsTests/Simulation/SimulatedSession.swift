import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence
import RealtimeSegments
import SegmentsTesting

/// One thing that happens in a simulated session: an app's call, a server's change of mind, or
/// time passing.
enum SimulatedOperation: Hashable, Sendable, CustomStringConvertible {
    typealias Integration = SpecModel.Integration
    case configure(Integration)
    case stop
    case anonymize
    case identify(String)
    /// Registers listener number n (the n-th `addListener` of the session, from 1).
    case addListener(category: String, includeFirstLoad: Bool)
    case removeListener(Int)
    case track
    case read(category: String, force: Bool)
    case setMode(SpecModel.FlushingMode)
    case flush
    case serverAnswers(Integration, who: String, SpecModel.Segments)
    case serverFailsNextFetch(Integration, SpecModel.Failure)
    case serverFailsNextLink(Integration, SpecModel.Failure)
    case advance(Double)
    /// The user sets the device's clock by this many seconds.
    case moveWallClock(Double)

    var description: String {
        switch self {
        case .configure(let integration): "configure(\(integration))"
        case .stop: "stop()"
        case .anonymize: "anonymize()"
        case .identify(let id): "identify(registered: \(id))"
        case .addListener(let category, let includeFirstLoad): "addListener(\(category)\(includeFirstLoad ? ", includeFirstLoad" : ""))"
        case .removeListener(let id): "removeListener(#\(id))"
        case .track: "trackEvent()"
        case .read(let category, let force): "getSegments(\(category)\(force ? ", force" : ""))"
        case .setMode(let mode): "flushingMode = .\(mode)"
        case .flush: "flush()"
        case .serverAnswers(let integration, let who, let segments):
            "server \(integration) answers \(who): \(segments.sorted { $0.key < $1.key }.map { "\($0.key)=[\($0.value.joined(separator: ","))]" }.joined(separator: " "))"
        case .serverFailsNextFetch(let integration, let failure): "server \(integration) fails next fetch: \(failure)"
        case .serverFailsNextLink(let integration, let failure): "server \(integration) fails next link: \(failure)"
        case .advance(let seconds): "advance(\(seconds))"
        case .moveWallClock(let seconds): "moveWallClock(by: \(seconds))"
        }
    }
}

/// Random sessions from a seed: the same seed always gives the same operations.
struct SessionGenerator {
    static let categories = ["content", "discovery", "merchandising"]
    static let segmentIds = ["s1", "s2", "s3"]

    /// The session's storage layout.
    let layout: SpecModel.Layout

    private var random: SeededGenerator
    private var listenersAdded = 0
    /// The rest of a pattern of several operations.
    private var pattern: [SimulatedOperation] = []

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
        layout = random.chance(0.5) ? .oneStorage : .storagePerProject
    }

    mutating func session(length: Int) -> [SimulatedOperation] {
        (0..<length).map { _ in next() }
    }

    private mutating func next() -> SimulatedOperation {
        if !pattern.isEmpty { return pattern.removeFirst() }
        let integration: SpecModel.Integration = random.chance(0.6) ? .a : .b
        switch random.next(below: 100) {
        case 0..<7: return .configure(integration)
        case 7..<9: return .stop
        case 9..<13: return .anonymize
        case 13..<18: return .identify(random.pick(["u1", "u2"]))
        case 18..<31:
            listenersAdded += 1
            return .addListener(category: random.pick(Self.categories), includeFirstLoad: random.chance(0.4))
        case 31..<36: return .removeListener(Int(random.next(below: UInt64(listenersAdded + 1))) + 1)
        case 36..<43: return .track
        case 43..<53: return .read(category: random.pick(Self.categories), force: random.chance(0.3))
        case 53..<57: return .setMode(random.chance(0.5) ? .immediate : .manual)
        case 57..<59: return .flush
        case 59..<68: return .serverAnswers(integration, who: random.pick(["anonymous", "u1", "u2"]), segments())
        case 68..<74:
            let status = random.pick([404, 500, 503, 429, 400])
            let retryAfter: Double? = random.chance(0.3) ? Double(random.pick([1, 7, 45, 900])) : nil
            return .serverFailsNextFetch(integration, .init(status: status, retryAfter: retryAfter))
        case 74..<76: return .serverFailsNextLink(integration, .init(status: random.pick([500, 404]), retryAfter: nil))
        case 76..<78:
            // Steady tracking, one event every few seconds for a minute (T5's max wait).
            for _ in 0..<15 { pattern += [.track, .advance(random.pick([1.5, 3, 4.5]))] }
            return pattern.removeFirst()
        case 78..<80:
            // The customer keeps changing under a read's fetches (C2, C3, G6).
            pattern = [.read(category: random.pick(Self.categories), force: true)]
            for _ in 0..<5 { pattern += [random.chance(0.5) ? .anonymize : .identify(random.pick(["u1", "u2"])), .advance(0.25)] }
            return pattern.removeFirst()
        case 80..<82: return .moveWallClock(random.pick([-3600, -3, 4, 7200]))
        default:
            // Whole and half seconds plus a 1/64 s fraction: binary fractions, so virtual time is
            // exact on both sides, and the timers' (whole-second) moments are met now and then.
            let base = random.pick([0.25, 1, 2.5, 4.75, 5, 5.5, 12, 30, 31, 70])
            return .advance(base + (random.chance(0.5) ? Double(random.next(below: 64)) / 64 : 0))
        }
    }

    /// An answer: some categories, each with some segments, some of them altered (`s1*`), in any
    /// order (D2).
    private mutating func segments() -> SpecModel.Segments {
        var answer: SpecModel.Segments = [:]
        for category in Self.categories where random.chance(0.6) {
            var list = Self.segmentIds.filter { _ in random.chance(0.4) }.map { random.chance(0.2) ? $0 + "*" : $0 }
            if list.count > 1, random.chance(0.5) { list.reverse() }
            answer[category] = list
        }
        return answer
    }
}

extension SeededGenerator {
    mutating func chance(_ probability: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[Int(next(below: UInt64(values.count)))] }
}

/// One request a simulated server received.
struct RequestRecord: Sendable {
    let at: Double
    let integration: SpecModel.Integration
    let kind: String
    let customer: CustomerIds?
}

/// The real client under test, on virtual time, with fake servers per integration.
final class SimulatedWorld: Sendable {
    typealias Integration = SpecModel.Integration

    /// A backend whose answers the session scripts; requests are logged with their virtual time.
    final class Server: SegmentRepository, EventUploader, Sendable {
        let integration: Integration
        let world: Locked<SpecModel.Server>
        private let scheduler: TestScheduler
        private let requests: Locked<[RequestRecord]>

        init(_ integration: Integration, scheduler: TestScheduler, requests: Locked<[RequestRecord]>) {
            self.integration = integration
            self.scheduler = scheduler
            self.requests = requests
            world = Locked(SpecModel.Server())
        }

        func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
            requests.withLock { $0.append(RequestRecord(at: scheduler.uptime(), integration: integration, kind: "fetch", customer: customer)) }
            let registered = customer.values["registered"]
            let result = world.withLock { server -> Result<SpecModel.Segments, SpecModel.Failure> in
                if !server.failNextFetches.isEmpty { return .failure(server.failNextFetches.removeFirst()) }
                return .success(server.answers[registered ?? "anonymous"] ?? [:])
            }
            await scheduler.sleep(for: SpecModel.fetchTime)
            switch result {
            case .success(let segments):
                return Dictionary(uniqueKeysWithValues: segments.map { category, names in
                    (SegmentCategory(category), names.map(SimulatedWorld.segment(named:)))
                })
            case .failure(let failure): throw Self.error(failure)
            }
        }

        func linkCustomerIds(_ customer: CustomerIds) async throws {
            requests.withLock { $0.append(RequestRecord(at: scheduler.uptime(), integration: integration, kind: "link", customer: customer)) }
            let failure = world.withLock { $0.failNextLinks.isEmpty ? nil : $0.failNextLinks.removeFirst() }
            await scheduler.sleep(for: SpecModel.fetchTime)
            if let failure { throw Self.error(failure) }
        }

        func upload(_ event: TrackedEvent) async throws {
            requests.withLock { $0.append(RequestRecord(at: scheduler.uptime(), integration: integration, kind: "upload", customer: event.customerIds)) }
        }

        private static func error(_ failure: SpecModel.Failure) -> SegmentsError {
            SegmentsError(.httpStatus, "the simulated server said \(failure.status)", httpStatus: failure.status, retryAfter: failure.retryAfter)
        }
    }

    /// A baseline and an event queue per integration (as folders per project keep them), chosen
    /// by the integration being configured: the session switches it only while nothing is
    /// pending on the storage queue. In the one-storage layout both integrations use A's.
    final class StoresPerIntegration: SegmentBaselineStore, EventQueueStore, Sendable {
        let baselines: [Integration: InMemorySegmentBaselineStore] = [.a: InMemorySegmentBaselineStore(), .b: InMemorySegmentBaselineStore()]
        let events: [Integration: InMemoryEventQueueStore] = [.a: InMemoryEventQueueStore(), .b: InMemoryEventQueueStore()]
        let route = Locked(Integration.a)
        func load() -> SegmentBaseline { baselines[route.value]!.load() }
        func save(_ baseline: SegmentBaseline) throws { baselines[route.value]!.save(baseline) }
        func load() -> [TrackedEvent] { events[route.value]!.load() }
        func append(_ event: TrackedEvent) throws { events[route.value]!.append(event) }
        func update(_ event: TrackedEvent) throws { events[route.value]!.update(event) }
        func remove(id: TrackedEvent.ID) throws { events[route.value]!.remove(id: id) }
    }

    /// `s1` is segment s1; `s1*` is s1 altered (another segmentation id).
    static func segment(named name: String) -> Segment {
        name.hasSuffix("*") ? Segment(id: String(name.dropLast()), segmentationId: "g-altered") : Segment(id: name, segmentationId: "g")
    }

    static func name(of segment: Segment) -> String {
        segment.segmentationId == "g-altered" ? segment.id + "*" : segment.id
    }

    let scheduler = TestScheduler()
    let deliveryQueue = DispatchQueue(label: "simulation.delivery")
    let storageQueue = DispatchQueue(label: "simulation.storage")
    let servers: [Integration: Server]
    let layout: SpecModel.Layout
    let stores = StoresPerIntegration()
    let client: SegmentsClient
    let logger = ContractLines()
    /// Listener calls and read answers, in the order the delivery queue ran them.
    let delivered = Locked<[SpecModel.Delivery]>([])
    private let requestLog: Locked<[RequestRecord]>
    private let listenerTokens = Locked<[Int: ListenerToken]>([:])
    private let cookies = Locked<[String: Int]>([:])

    init(layout: SpecModel.Layout) {
        self.layout = layout
        let requests = Locked<[RequestRecord]>([])
        requestLog = requests
        servers = [.a: Server(.a, scheduler: scheduler, requests: requests), .b: Server(.b, scheduler: scheduler, requests: requests)]
        let timings = SegmentationTimings(retry: RetryBackoff(jitter: 0))
        client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(scheduler: scheduler, clock: scheduler, logger: logger, deliveryQueue: deliveryQueue),
                timings: timings, uploadRetry: RetryBackoff(jitter: 0), transport: RecordingTransport(),
                storage: .custom(customer: InMemoryCustomerStore(), baseline: stores, events: stores),
                storageQueue: storageQueue))
    }

    /// Performs `operation` on the real client; returns whether a tracking call was refused.
    func perform(_ operation: SimulatedOperation, listenerNumber: Int, readNumber: Int) async -> Bool {
        var refused = false
        switch operation {
        case .configure(let integration):
            if layout == .storagePerProject { stores.route.withLock { $0 = integration } }
            try? client.configure(.init(backend: .custom(id: integration.rawValue, repository: servers[integration]!, uploader: servers[integration]!)))
        case .stop:
            client.stop()
        case .anonymize:
            client.anonymize()
        case .identify(let id):
            do { try client.identifyCustomer(customerIds: ["registered": id], properties: [:], timestamp: nil) } catch { refused = true }
        case .addListener(let category, let includeFirstLoad):
            let scheduler = scheduler
            let delivered = delivered
            let token = client.addListener(category: SegmentCategory(category), includeFirstLoad: includeFirstLoad) { segments in
                delivered.withLock { $0.append(.told(at: scheduler.uptime(), listener: listenerNumber, segments: segments.map(SimulatedWorld.name(of:)).sorted())) }
            }
            listenerTokens.withLock { $0[listenerNumber] = token }
        case .removeListener(let number):
            if let token = listenerTokens.value[number] { client.removeListener(token) }
        case .track:
            do { try client.trackEvent(properties: [:], timestamp: nil, eventType: "view") } catch { refused = true }
        case .read(let category, let force):
            let scheduler = scheduler
            let delivered = delivered
            client.getSegments(force: force, category: SegmentCategory(category)) { result in
                let answer: SpecModel.Answer
                switch result {
                case .success(let segments): answer = .segments(segments.map(SimulatedWorld.name(of:)).sorted())
                case .failure(let error): answer = .error(error.code.rawValue)
                }
                delivered.withLock { $0.append(.answered(at: scheduler.uptime(), read: readNumber, answer)) }
            }
        case .setMode(let mode):
            client.flushingMode = mode == .immediate ? .immediate : .manual
        case .flush:
            client.flush { _ in }
        case .serverAnswers(let integration, let who, let segments):
            servers[integration]!.world.withLock { $0.answers[who] = segments }
        case .serverFailsNextFetch(let integration, let failure):
            servers[integration]!.world.withLock { $0.failNextFetches.append(failure) }
        case .serverFailsNextLink(let integration, let failure):
            servers[integration]!.world.withLock { $0.failNextLinks.append(failure) }
        case .moveWallClock(let seconds):
            scheduler.moveWallClock(by: seconds)
        case .advance(let seconds):
            await advance(by: seconds)
            return false
        }
        await settle()
        return refused
    }

    /// Moves virtual time on one due piece of work at a time, letting the queues settle after
    /// each, so every call and answer happens at its own moment.
    private func advance(by seconds: Double) async {
        let target = scheduler.uptime() + seconds
        while let next = scheduler.pendingDelays.first, scheduler.uptime() + next <= target {
            await scheduler.advance(by: next)
            await settle()
        }
        await scheduler.advance(by: target - scheduler.uptime())
        await settle()
    }

    /// Lets the storage queue, work due now and the delivery queue run until nothing is left.
    ///
    /// `sync {}` rather than the bounded `drained(_:)` of the other tests: a campaign settles about
    /// a million times, and `sync` runs the empty block on this thread instead of a hop and a
    /// wait (the campaign takes a third of the time). A deadlock here ends the run at `.ci/run`'s
    /// outer limit, which names this test as the one still running.
    private func settle() async {
        var rounds = 0
        repeat {
            storageQueue.sync {}
            await scheduler.advance(by: 0)
            storageQueue.sync {}
            deliveryQueue.sync {}
            rounds += 1
        } while rounds < 3 || (rounds < 20 && scheduler.pendingDelays.first == 0)
    }

    /// The client's customer as the model writes it: cookies numbered in the order first seen.
    func customer(_ ids: CustomerIds?) -> SpecModel.Customer? {
        guard let ids, let cookie = ids.cookie else { return nil }
        let number = cookies.withLock { cookies in
            if let number = cookies[cookie] { return number }
            cookies[cookie] = cookies.count
            return cookies.count - 1
        }
        return SpecModel.Customer(cookie: number, registered: ids.values["registered"])
    }

    /// The contract's log lines written so far, in order.
    var logs: [String] { logger.lines.value }

    /// A logger that keeps the contract's lines (``SpecModel/Log``) and drops the rest.
    final class ContractLines: SegmentsLogger, Sendable {
        let lines = Locked<[String]>([])
        var logLevel: LogLevel { .verbose }
        func log(_ level: LogLevel, _ message: String) {
            if SpecModel.Log.all.contains(message) { lines.withLock { $0.append(message) } }
        }
    }

    /// The servers' requests as the model writes them.
    var requests: [SpecModel.Request] {
        requestLog.value.map { record -> SpecModel.Request in
            switch record.kind {
            case "link": return .link(at: record.at, record.integration, customer(record.customer)!)
            case "fetch": return .fetch(at: record.at, record.integration, customer(record.customer)!)
            default: return .upload(at: record.at, record.integration, customer(record.customer)!)
            }
        }
    }
}
