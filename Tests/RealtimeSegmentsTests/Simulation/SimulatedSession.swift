import Foundation
import SegmentsDomain
import SegmentsData
@testable import SegmentsPersistence
import RealtimeSegments
import SegmentsTesting

/// One thing that happens in a simulated session: an app's call, an app lifecycle event, a
/// server's change of mind, a restart, or time passing.
indirect enum SimulatedOperation: Hashable, Sendable, CustomStringConvertible {
    typealias Integration = SpecModel.Integration
    typealias Mode = SpecModel.FlushingMode
    /// `mode`: the flushing mode the configuration names, if any (E2).
    case configure(Integration, mode: Mode? = nil)
    case stop
    /// `stopAndDeleteData(completion:)` (`stopIntegration` of the Exponea SDK 4.x, A3 rev 4): the
    /// world waits for its completion, which must come.
    case stopAndDeleteData
    case anonymize
    case identify(String)
    /// Registers listener number n (the n-th listener of the session, from 1; a model's categories
    /// and streams are numbered alike).
    case addListener(category: String, includeFirstLoad: Bool)
    /// A listener tied to an owner object the app holds (M4) until ``releaseOwner(_:)``.
    case addOwnedListener(category: String)
    case releaseOwner(Int)
    case removeListener(Int)
    /// `changes(of:includeFirstLoad:)` iterated by a task (M4, M5 rev 4).
    case openStream(category: String, includeFirstLoad: Bool)
    /// The app stops iterating the stream of listener n.
    case endStream(Int)
    /// A `SegmentsModel` of these categories (M5); models are numbered from 1.
    case addModel([String])
    case releaseModel(Int)
    case track
    case read(category: String, force: Bool)
    case setMode(Mode)
    /// `flush(completion:)`; its result is a delivery (E5).
    case flush
    /// Posted to the manual app lifecycle (E2, E7, T11).
    case lifecycle(SpecModel.LifecycleEvent)
    /// The platform runs out the background time asked for (E7).
    case expireBackgroundTime
    /// The platform reports the network path usable or not (N1–N3).
    case networkPath(usable: Bool)
    case serverAnswers(Integration, who: String, SpecModel.Segments)
    case serverFailsNextFetch(Integration, SpecModel.Failure)
    case serverFailsNextLink(Integration, SpecModel.Failure)
    /// The next `times` uploads to the integration fail so (E3).
    case serverFailsNextUploads(Integration, SpecModel.Failure, times: Int)
    case advance(Double)
    /// The user sets the device's clock by this many seconds.
    case moveWallClock(Double)
    /// From here the client's queued work — disk work, deliveries, work due now — waits: calls
    /// are made while it is still queued (R1, R3, A4), until ``settle``.
    case hold
    case settle
    /// The client object goes (after `stop()` when `stopFirst`) and a new one comes over the same
    /// stores (R1, E4).
    case restart(stopFirst: Bool)
    /// A second client configures on the folder (P5): refused while the first holds it, else it
    /// takes the folder over (R1). Files only.
    case handOver(Integration)
    /// A restart before the first unlock (P8): a new client configures while every file is
    /// refused and protected data is unavailable, makes these calls, then protected data becomes
    /// available. Files only.
    case protectedLaunch(Integration, [SimulatedOperation])
    /// The first call on this thread while the second runs on another (A4).
    case race(SimulatedOperation, SimulatedOperation)

    var description: String {
        switch self {
        case .configure(let integration, let mode): "configure(\(integration)\(mode.map { ", flushingMode: .\($0)" } ?? ""))"
        case .stop: "stop()"
        case .stopAndDeleteData: "stopAndDeleteData(completion:)"
        case .anonymize: "anonymize()"
        case .identify(let id): "identify(registered: \(id))"
        case .addListener(let category, let includeFirstLoad): "addListener(\(category)\(includeFirstLoad ? ", includeFirstLoad" : ""))"
        case .addOwnedListener(let category): "addListener(\(category), owner:)"
        case .releaseOwner(let id): "release the owner of #\(id)"
        case .removeListener(let id): "removeListener(#\(id))"
        case .openStream(let category, let includeFirstLoad): "changes(of: \(category)\(includeFirstLoad ? ", includeFirstLoad" : ""))"
        case .endStream(let id): "end the iteration of stream #\(id)"
        case .addModel(let categories): "SegmentsModel(categories: [\(categories.joined(separator: ", "))])"
        case .releaseModel(let number): "release model \(number)"
        case .track: "trackEvent()"
        case .read(let category, let force): "getSegments(\(category)\(force ? ", force" : ""))"
        case .setMode(let mode): "flushingMode = .\(mode)"
        case .flush: "flush()"
        case .lifecycle(let event): "post(.\(event))"
        case .expireBackgroundTime: "expireBackgroundTime()"
        case .networkPath(let usable): usable ? "path.goOnline()" : "path.goOffline()"
        case .serverAnswers(let integration, let who, let segments):
            "server \(integration) answers \(who): \(segments.sorted { $0.key < $1.key }.map { "\($0.key)=[\($0.value.joined(separator: ","))]" }.joined(separator: " "))"
        case .serverFailsNextFetch(let integration, let failure): "server \(integration) fails next fetch: \(failure)"
        case .serverFailsNextLink(let integration, let failure): "server \(integration) fails next link: \(failure)"
        case .serverFailsNextUploads(let integration, let failure, let times): "server \(integration) fails next \(times) upload(s): \(failure)"
        case .advance(let seconds): "advance(\(seconds))"
        case .moveWallClock(let seconds): "moveWallClock(by: \(seconds))"
        case .hold: "hold (queued work waits)"
        case .settle: "settle"
        case .restart(let stopFirst): stopFirst ? "stop(), release the client, new client" : "release the client, new client"
        case .handOver(let integration): "a second client configures(\(integration)) on the folder"
        case .protectedLaunch(let integration, let calls):
            "new client before the first unlock: configure(\(integration)), \(calls.map(\.description).joined(separator: ", ")), protected data available"
        case .race(let first, let second): "race { \(first) } with { \(second) } on another thread"
        }
    }

    /// Whether the client's queued work runs before it (in the world and the model alike): what
    /// servers and time do acts on a settled client, and so do hand-overs and launches. (A restart
    /// on a folder in a held stretch lets the client go with its work still queued.)
    func settlesBefore(_ layout: SpecModel.Layout) -> Bool {
        switch self {
        case .serverAnswers, .serverFailsNextFetch, .serverFailsNextLink, .serverFailsNextUploads, .advance, .settle, .handOver,
            .protectedLaunch, .stopAndDeleteData, .networkPath:
            true
        // The app's stores per project are routed by the integration being configured: switched
        // only when no disk work is queued.
        case .configure: layout == .storagePerProject
        // Two clients over the app's own stores have two storage queues that nothing orders: a
        // new one reads what the old one saved only once that ran. A folder's next owner waits
        // for the previous one's saves (P5, R1).
        case .restart: layout != .files
        case .race(let first, let second): first.settlesBefore(layout) || second.settlesBefore(layout)
        default: false
        }
    }
}

/// The findings of issue 32 that the lead engineer is fixing on main: until each fix lands, the
/// random generator leaves out the trigger named below, so the campaign passes on today's code.
/// Each finding the simulation hit is also kept as a shrunk session wrapped in
/// `withKnownIssue("issue 32 finding N")` (``SimulationKnownDefectTests``); when its fix lands, that
/// test fails (known issue not recorded), and the finding's number is removed here.
///
/// `SIMULATION_EXCLUDED_FINDINGS` (comma-separated numbers, empty for none) overrides the set,
/// to look for a finding on purpose.
enum SimulationKnownDefects {
    /// None: every finding's fix has landed and the campaign drives every trigger. Finding 1's
    /// trigger was the last to come back: after its deadlock was fixed, the model still took a
    /// `deinit`'s configure as made only before the queued work of the call that let its object
    /// go or after all of it, and the seed-21 campaign diverged at session seed 116 when it came
    /// between (``SpecModel/settled(configuring:afterTheLoad:)`` accepts each moment now; the
    /// campaign's even seeds pin that configure after the load, where a dropped one shows).
    static let defaultExcluded: Set<Int> = []

    /// What each left-out trigger is.
    static let triggers: [Int: String] = [
        1: "an app object (the custom uploader) whose deinit calls configure",
        2: "stop() while a SegmentsModel or a changes(of:) stream is alive",
        3: "identifyCustomer racing anonymize (or another identifyCustomer) on two threads",
        4: "a client released without stop() after an anonymize",
        5: "another client configuring on the folder after stop() (the stopped client still alive)",
        7: "the periodic mode in a session whose uploads fail transiently",
        // Found by this simulation (not in the issue's list).
        11: "a re-configure or stop() while a flush the configuration asked for is still queued",
        12: "a client on a folder released without stop() (its work in flight keeps the folder's lock)",
        13: "an event tracked before the first unlock, uploaded before the protected-data retry ran",
        14: "the app returning to the foreground during a configuration's background load",
        16: "identifyCustomer racing stop() on two threads",
    ]

    static let excluded: Set<Int> = {
        guard let text = ProcessInfo.processInfo.environment["SIMULATION_EXCLUDED_FINDINGS"] else { return defaultExcluded }
        return Set(text.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) })
    }()
}

/// What a session drives: chosen from its seed.
struct SessionProfile: Hashable, Sendable, CustomStringConvertible {
    var layout: SpecModel.Layout
    /// Calls made while queued work waits (``SimulatedOperation/hold``).
    var holds = false
    /// Lifecycle calls raced on two threads.
    var races = false
    /// Uploads that fail.
    var failingUploads = false
    /// Models, streams, owner-tied listeners.
    var observers = false
    /// Restarts (and, with files, hand-overs and protected launches).
    var restarts = false
    /// When the client's queued work runs, its storage queue before the work due now on the
    /// scheduler (``SimulatedWorld/storageFirst``).
    var storageFirst = true
    /// The network path goes and comes back (N1, N2).
    var pathChanges = false
    var description: String {
        "\(layout)" + (holds ? ", holds" : "") + (races ? ", races" : "") + (failingUploads ? ", failing uploads" : "")
            + (observers ? ", models and streams" : "") + (restarts ? ", restarts" : "")
            + (storageFirst ? ", storage first" : ", scheduler first") + (pathChanges ? ", path changes" : "")
    }
}

/// Random sessions from a seed: the same seed always gives the same operations.
struct SessionGenerator {
    static let categories = ["content", "discovery", "merchandising"]
    static let segmentIds = ["s1", "s2", "s3"]
    /// Binary fractions, so every moment is exact on both sides.
    static let periods: [Double] = [0.5, 1, 203.0 / 64, 7.5, 21.25]

    let profile: SessionProfile
    let excluded: Set<Int>

    private var random: SeededGenerator
    private var listenersAdded = 0
    private var streams: [Int] = []
    private var models = 0
    private var modelsAlive: [Int] = []
    private var owned: [Int] = []
    /// What the generator knows of the client, for the triggers it leaves out.
    private var stopped = false
    private var configured = false
    private var anonymizedSinceRestart = false
    private var holding = false
    /// Whether a flush may be asked for and still queued (a held stretch after tracking, a flush,
    /// a mode or a lifecycle event).
    private var flushMayBeQueued = false
    /// Whether a configure was made in the held stretch (its background load waits).
    private var loadMayWait = false
    /// The rest of a pattern of several operations.
    private var pattern: [SimulatedOperation] = []
    /// Whether the last path change left the device offline.
    private var offline = false

    /// A session of the default campaign: its storage and what it drives follow from the seed.
    init(seed: UInt64, excluded: Set<Int> = SimulationKnownDefects.excluded) {
        random = SeededGenerator(seed: seed)
        self.excluded = excluded
        let layout: SpecModel.Layout =
            switch random.next(below: 10) {
            case 0..<3: .oneStorage
            case 3..<5: .storagePerProject
            default: .files
            }
        var profile = SessionProfile(layout: layout)
        profile.holds = random.chance(0.5)
        profile.races = random.chance(0.4)
        profile.failingUploads = random.chance(0.55)
        profile.observers = random.chance(0.5)
        profile.restarts = random.chance(layout == .files ? 0.7 : 0.4)
        profile.storageFirst = random.chance(0.5)
        profile.pathChanges = random.chance(0.5)
        self.profile = profile
    }

    var layout: SpecModel.Layout { profile.layout }

    mutating func session(length: Int) -> [SimulatedOperation] {
        var operations: [SimulatedOperation] = []
        while operations.count < length {
            let operation = next()
            note(operation)
            operations.append(operation)
        }
        return operations
    }

    /// Follows what the generated operations do to the client, roughly (for exclusions only).
    private mutating func note(_ operation: SimulatedOperation) {
        switch operation {
        case .configure:
            configured = true
            stopped = false
        case .stop, .stopAndDeleteData:
            if configured { stopped = true }
            configured = false
        case .anonymize: if configured { anonymizedSinceRestart = true }
        case .restart, .protectedLaunch:
            configured = false
            stopped = false
            anonymizedSinceRestart = false
            streams = []
            modelsAlive = []
            owned = []
            if case .protectedLaunch(_, let calls) = operation {
                configured = true
                if calls.contains(.anonymize) { anonymizedSinceRestart = true }
            }
        case .handOver:
            if !configured {
                configured = true
                stopped = false
                anonymizedSinceRestart = false
                streams = []
                modelsAlive = []
                owned = []
            }
        case .race(let first, let second):
            note(first)
            note(second)
            // Either order may have happened: what either leaves counts.
            if [first, second].contains(.stop) { stopped = true }
            if [first, second].contains(.anonymize) { anonymizedSinceRestart = true }
        case .hold: holding = true
        case .settle, .advance: holding = false
        case .track, .identify, .flush, .setMode, .lifecycle: if holding { flushMayBeQueued = true }
        default: break
        }
        if case .configure = operation, holding { loadMayWait = true }  // (a raced one is noted above)
        if operation.settlesBefore(layout) { holding = false }
        if !holding {
            flushMayBeQueued = false
            loadMayWait = false
        }
    }

    private var observed: Bool { !streams.isEmpty || !modelsAlive.isEmpty }

    private mutating func mode() -> SpecModel.FlushingMode {
        var modes: [SpecModel.FlushingMode] = [.immediate, .immediate, .manual, .automatic]
        if !(profile.failingUploads && excluded.contains(7)) { modes.append(.periodic(random.pick(Self.periods))) }
        return random.pick(modes)
    }

    private mutating func failure(upload: Bool) -> SpecModel.Failure {
        let status = random.pick(upload ? [500, 503, 429, 400, 404, 401, 403] : [404, 500, 503, 429, 400])
        let retryAfter: Double? = random.chance(0.3) ? Double(random.pick([1, 7, 45, 900])) : nil
        return .init(status: status, retryAfter: retryAfter)
    }

    private mutating func next() -> SimulatedOperation {
        if !pattern.isEmpty { return pattern.removeFirst() }
        if profile.pathChanges, random.chance(offline ? 0.08 : 0.04) {
            // N1, N2: the path goes (a stretch of calls and time offline) and comes back.
            offline.toggle()
            return .networkPath(usable: !offline)
        }
        let integration: SpecModel.Integration = random.chance(0.6) ? .a : .b
        switch random.next(below: 1000) {
        case 0..<55:
            if excluded.contains(11) && flushMayBeQueued { return .settle }
            return .configure(integration, mode: random.chance(0.3) ? mode() : nil)
        case 55..<75:
            if excluded.contains(2) && observed { return .track }
            if excluded.contains(11) && flushMayBeQueued { return .settle }
            // A3 rev 4: a configured client also stops deleting its data (the world waits for it).
            if configured && random.chance(0.4) { return .stopAndDeleteData }
            return .stop
        case 75..<110: return .anonymize
        case 110..<150: return .identify(random.pick(["u1", "u2"]))
        case 150..<250:
            listenersAdded += 1
            return .addListener(category: random.pick(Self.categories), includeFirstLoad: random.chance(0.4))
        case 250..<290: return .removeListener(Int(random.next(below: UInt64(listenersAdded + 1))) + 1)
        case 290..<360:
            if profile.observers && random.chance(0.35) { return observerOperation() }
            return .track
        case 360..<430: return .read(category: random.pick(Self.categories), force: random.chance(0.3))
        case 430..<470: return .setMode(mode())
        case 470..<500: return .flush
        case 500..<570: return .serverAnswers(integration, who: random.pick(["anonymous", "u1", "u2"]), segments())
        case 570..<610: return .serverFailsNextFetch(integration, failure(upload: false))
        case 610..<625: return .serverFailsNextLink(integration, .init(status: random.pick([500, 404]), retryAfter: nil))
        case 625..<640:
            guard random.chance(0.5) else { return .track }
            // Steady tracking, one event every few seconds for over half a minute (T5's max wait).
            for _ in 0..<11 { pattern += [.track, .advance(random.pick([3, 4.5]))] }
            return pattern.removeFirst()
        case 640..<655:
            // The customer keeps changing under a read's fetches (C2, C3, G6).
            pattern = [.read(category: random.pick(Self.categories), force: true)]
            if random.chance(0.5) {
                // New ids every time, so the read is retried until it gives up (G6).
                for index in 0..<6 { pattern += [.identify(index % 2 == 0 ? "u1" : "u2"), .advance(0.25)] }
            } else {
                for _ in 0..<5 { pattern += [random.chance(0.5) ? .anonymize : .identify(random.pick(["u1", "u2"])), .advance(0.25)] }
            }
            return pattern.removeFirst()
        case 655..<670: return .moveWallClock(random.pick([-3600, -3, 4, 7200]))
        case 670..<720:
            // The app leaves and comes back, the clocks moved meanwhile (E2, E7, T11).
            pattern = [.lifecycle(.willResignActive), .lifecycle(.didEnterBackground)]
            if random.chance(0.3) { pattern.append(.expireBackgroundTime) }
            pattern.append(.advance(random.pick([0.5, 3, 30, 59.5, 61, 125])))
            if random.chance(0.3) { pattern.append(.moveWallClock(random.pick([-3600, 7200]))) }
            if random.chance(0.85) { pattern += [.lifecycle(.willEnterForeground), .lifecycle(.didBecomeActive)] }
            return pattern.removeFirst()
        case 720..<735:
            let event = random.pick(SpecModel.LifecycleEvent.allCases)
            if event == .willEnterForeground && excluded.contains(14) && loadMayWait { return .lifecycle(.didBecomeActive) }
            return .lifecycle(event)
        case 735..<790:
            guard profile.failingUploads else { return .track }
            if random.chance(0.15) {
                // An item that keeps failing for good: dropped after its 10th failure (E3).
                pattern = [.serverFailsNextUploads(integration, .init(status: random.pick([400, 422])), times: 10), .track]
                for _ in 0..<10 { pattern += [.flush, .advance(random.pick([0.25, 1]))] }
                return pattern.removeFirst()
            }
            return .serverFailsNextUploads(integration, failure(upload: true), times: random.pick([1, 1, 2, 3]))
        case 790..<830:
            guard profile.holds else { return .track }
            // (A held stretch ends by an explicit settle often enough to be covered: finding 11's
            // trigger, once left out by turning calls into settles, is driven now.)
            return holding ? .settle : .hold
        case 830..<850:
            guard profile.holds, holding else { return .track }
            return .settle
        case 850..<900:
            guard profile.races else { return .identify(random.pick(["u1", "u2"])) }
            return race(integration)
        case 900..<950:
            guard profile.observers else { return .read(category: random.pick(Self.categories), force: false) }
            return observerOperation()
        case 950..<980:
            guard profile.restarts else { return .advance(random.pick([0.25, 5, 12])) }
            return restartLike(integration)
        default:
            // Whole and half seconds plus a 1/64 s fraction: binary fractions, so virtual time is
            // exact on both sides, and the timers' (whole-second) moments are met now and then.
            let base = random.pick([0.25, 1, 2.5, 4.75, 5, 5.5, 12, 30, 31, 70])
            return .advance(base + (random.chance(0.5) ? Double(random.next(below: 64)) / 64 : 0))
        }
    }

    /// A model, a stream or an owner-tied listener made or let go (M4, M5).
    private mutating func observerOperation() -> SimulatedOperation {
        // More than half the time one the app lets go of, when there is one.
        var alive: [Int] = []
        if !owned.isEmpty { alive.append(1) }
        if !streams.isEmpty { alive.append(3) }
        if !modelsAlive.isEmpty { alive.append(5) }
        let choice = !alive.isEmpty && random.chance(0.6) ? random.pick(alive) : Int(random.next(below: 6))
        switch choice {
        case 0:
            listenersAdded += 1
            owned.append(listenersAdded)
            return .addOwnedListener(category: random.pick(Self.categories))
        case 1:
            guard let id = owned.randomElement(using: &random) else { return .track }
            owned.removeAll { $0 == id }
            return .releaseOwner(id)
        case 2:
            listenersAdded += 1
            streams.append(listenersAdded)
            return .openStream(category: random.pick(Self.categories), includeFirstLoad: random.chance(0.5))
        case 3:
            guard let id = streams.randomElement(using: &random) else { return .track }
            streams.removeAll { $0 == id }
            return .endStream(id)
        case 4:
            let categories = Self.categories.filter { _ in random.chance(0.5) }
            guard !categories.isEmpty else { return .track }
            listenersAdded += categories.count
            models += 1
            modelsAlive.append(models)
            return .addModel(categories)
        default:
            guard let number = modelsAlive.randomElement(using: &random) else { return .track }
            modelsAlive.removeAll { $0 == number }
            return .releaseModel(number)
        }
    }

    /// A restart, a hand-over or a launch before the first unlock.
    private mutating func restartLike(_ integration: SpecModel.Integration) -> SimulatedOperation {
        let choice = profile.layout == .files ? random.next(below: 4) : 0
        switch choice {
        case 1:
            // P5: refused while this client is configured; a hand-over after stop() is finding 5.
            if excluded.contains(5) && stopped { return .restart(stopFirst: true) }
            return .handOver(integration)
        case 2:
            var calls: [SimulatedOperation] = []
            // Uploads race the retry only when the scheduler's work runs first (finding 13).
            let tracks = !(excluded.contains(13) && !profile.storageFirst)
            for _ in 0..<random.next(below: 4) {
                var choices: [SimulatedOperation] = [
                    .anonymize, .addListener(category: random.pick(Self.categories), includeFirstLoad: random.chance(0.5)),
                    .read(category: random.pick(Self.categories), force: false), .setMode(mode()),
                ]
                if tracks { choices += [.track, .track, .identify(random.pick(["u1", "u2"]))] }
                calls.append(random.pick(choices))
                if case .addListener = calls.last! { listenersAdded += 1 }
            }
            return .protectedLaunch(integration, calls)
        default:
            var stopFirst = random.chance(0.5)
            if excluded.contains(4) && anonymizedSinceRestart { stopFirst = true }
            if excluded.contains(12) && profile.layout == .files { stopFirst = true }
            return .restart(stopFirst: stopFirst)
        }
    }

    /// Two lifecycle calls on two threads at once (A4).
    private mutating func race(_ integration: SpecModel.Integration) -> SimulatedOperation {
        var first = raceCall()
        var second = raceCall()
        // An event raced with a change of customer may be stamped with either customer, and the
        // queue orders items per customer only (E3): the order of two items of different
        // customers is no promise, so `trackEvent` races only the calls that keep the customer.
        let changesCustomer: (SimulatedOperation) -> Bool = {
            switch $0 {
            case .identify, .anonymize: true
            default: false
            }
        }
        if first == .track && changesCustomer(second) { first = .setMode(mode()) }
        if second == .track && changesCustomer(first) { second = .setMode(mode()) }
        // Two raced events of one customer may be queued in either order; the model accepts that
        // (``SpecModel/reorderRacedItems(_:_:memory:file:)``), but it does not yet follow which
        // integration a raced pair of configures left in force when only two events tell: they do
        // not race each other.
        if first == .track && second == .track { second = .setMode(mode()) }
        if profile.layout == .storagePerProject {
            // The app's stores per project follow the integration configured last, as the world
            // routes them: which one that is after a race, only the client knows.
            if case .configure = first { first = .anonymize }
            if case .configure = second { second = .setMode(mode()) }
        }
        if excluded.contains(3) {
            let pair = [first, second]
            // (Another identifyCustomer changes the customer too: the same retry queues an update
            // twice.)
            let identifies = pair.filter { if case .identify = $0 { true } else { false } }.count
            if identifies == 2 || (identifies == 1 && pair.contains(.anonymize)) {
                if case .identify = first { first = .setMode(mode()) } else { second = .setMode(mode()) }
            }
        }
        if excluded.contains(11) {
            let pair = [first, second]
            let configures = pair.contains { switch $0 { case .configure, .stop: true; default: false } }
            let asksForFlush = pair.contains { switch $0 { case .track, .identify, .setMode: true; default: false } }
            if configures && (asksForFlush || flushMayBeQueued) { (first, second) = (.anonymize, .anonymize) }
        }
        if excluded.contains(16) {
            let pair = [first, second]
            let identifies = pair.contains { if case .identify = $0 { true } else { false } }
            if identifies && pair.contains(.stop) {
                if first == .stop { first = .anonymize } else { second = .anonymize }
            }
        }
        if excluded.contains(2) && observed {
            if first == .stop { first = .anonymize }
            if second == .stop { second = .anonymize }
        }
        return .race(first, second)
    }

    private mutating func raceCall() -> SimulatedOperation {
        switch random.next(below: 7) {
        case 0: .configure(random.chance(0.5) ? .a : .b, mode: nil)
        case 1: .stop
        case 2: .anonymize
        case 3: .identify(random.pick(["u1", "u2"]))
        case 4: .setMode(mode())
        default: .track
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
    var item = 0
    var status = 200
}
