import Foundation
import Testing
import SegmentsTesting

/// Where a session's client and the model first disagreed.
struct Divergence: CustomStringConvertible {
    let operation: Int
    let what: String
    var description: String { "after operation \(operation): \(what)" }
    /// What disagreed (the customer, the requests, a race, a deadlock, …), for the shrinking.
    var kind: String {
        let first = what.prefix { $0 != "\n" }
        for kind in [
            "no candidate order", "did not return", "did not drain", "did not finish", "the customer is", "isConfigured",
            "delivery queue", "server requests", "log lines", "queuedEventCount", "listenerCount", "background time", "stream #",
            "SegmentsModel", "refused",
        ] where first.contains(kind) {
            return kind
        }
        return String(first.prefix(20))
    }
}

/// What a session exercised, so a campaign can prove it was not hollow.
struct SimulationCoverage: CustomStringConvertible {
    var sessions = 0
    var operations = 0
    var listenerCalls = 0
    var answers: [String: Int] = [:]
    var flushResults: [String: Int] = [:]
    var links = 0
    var fetches = 0
    var uploads: [Int: Int] = [:]
    var applied: [String: Int] = [:]
    /// How often each kind of operation was applied (``SimulatedOperation/kind``).
    var kinds: [String: Int] = [:]
    var profiles: [String: Int] = [:]
    /// App objects released by the SDK whose `deinit` called it (D7).
    var probeDeinits = 0
    var backgroundTimeRequests = 0

    mutating func add(_ model: SpecModel) {
        applied.merge(model.applied, uniquingKeysWith: +)
        backgroundTimeRequests += model.backgroundTime.count
        for delivery in model.deliveries {
            switch delivery {
            case .told: listenerCalls += 1
            case .answered(_, _, .segments): answers["segments", default: 0] += 1
            case .answered(_, _, .error(let code)): answers[code, default: 0] += 1
            case .flushed(_, _, .uploaded): flushResults["uploaded", default: 0] += 1
            case .flushed(_, _, .error(let code)): flushResults[code, default: 0] += 1
            }
        }
        for request in model.requests {
            switch request {
            case .link: links += 1
            case .fetch: fetches += 1
            case .upload(_, _, _, _, let status): uploads[status, default: 0] += 1
            }
        }
    }

    mutating func count(_ operation: SimulatedOperation) {
        kinds[operation.kind, default: 0] += 1
        switch operation {
        case .race(let first, let second):
            count(first)
            count(second)
        case .protectedLaunch(_, let calls): calls.forEach { count($0) }
        default: break
        }
    }

    var description: String {
        func sorted<V>(_ dictionary: [String: V]) -> String {
            dictionary.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        }
        return """
            \(sessions) sessions, \(operations) operations; \(listenerCalls) listener calls, \(fetches) fetches, \(links) links, \
            uploads by status \(uploads.sorted { $0.key < $1.key }), \(backgroundTimeRequests) background time requests, \
            \(probeDeinits) app objects released calling the SDK
              read answers: \(sorted(answers))
              flush results: \(sorted(flushResults))
              sessions: \(sorted(profiles))
              operations: \(sorted(kinds))
              rules: \(sorted(applied))
            """
    }
}

extension SimulatedOperation {
    /// The operation's kind, for the coverage counts (modes and events by name).
    var kind: String {
        switch self {
        case .configure(_, let mode): mode.map { "configure naming \(Self.modeKind($0))" } ?? "configure"
        case .stop: "stop"
        case .stopAndDeleteData: "stopAndDeleteData"
        case .anonymize: "anonymize"
        case .identify: "identify"
        case .addListener: "addListener"
        case .addOwnedListener: "addOwnedListener"
        case .releaseOwner: "releaseOwner"
        case .removeListener: "removeListener"
        case .openStream: "openStream"
        case .endStream: "endStream"
        case .addModel: "addModel"
        case .releaseModel: "releaseModel"
        case .track: "track"
        case .read: "read"
        case .setMode(let mode): "setMode(\(Self.modeKind(mode)))"
        case .flush: "flush"
        case .lifecycle(let event): "lifecycle(\(event))"
        case .expireBackgroundTime: "expireBackgroundTime"
        case .networkPath(let usable): usable ? "path online" : "path offline"
        case .serverAnswers: "serverAnswers"
        case .serverFailsNextFetch: "serverFailsNextFetch"
        case .serverFailsNextLink: "serverFailsNextLink"
        case .serverFailsNextUploads(_, let failure, _):
            "serverFailsNextUploads(\(failure.isAuthorization ? "401/403" : failure.isTransient ? "transient" : "permanent"))"
        case .advance: "advance"
        case .moveWallClock: "moveWallClock"
        case .hold: "hold"
        case .settle: "settle"
        case .restart(let stopFirst): stopFirst ? "restart after stop" : "restart by release"
        case .handOver: "handOver"
        case .protectedLaunch: "protectedLaunch"
        case .race: "race"
        }
    }

    private static func modeKind(_ mode: SpecModel.FlushingMode) -> String {
        switch mode {
        case .immediate: "immediate"
        case .periodic: "periodic"
        case .automatic: "automatic"
        case .manual: "manual"
        }
    }
}

/// Runs sessions on the real client and on the model side by side (Docs/Reliability.md,
/// "Deterministic simulation").
enum Simulation {
    /// `SIMULATION_TRACE=1`: print what the client and the model did after each operation.
    static let trace = ProcessInfo.processInfo.environment["SIMULATION_TRACE"] != nil

    /// What the world showed after an operation.
    struct Observed {
        var customer: SpecModel.Customer?
        var configured = false
        var deliveries: [SpecModel.Delivery] = []
        var requests: [SpecModel.Request] = []
        var logs: [SpecModel.LogLine] = []
        var queuedCount = 0
        var listenerCount = 0
        var backgroundTime: [(ended: Bool, expired: Bool)] = []
        var streams: [Int: (values: [[String]], finished: Bool)] = [:]
        var modelLists: [Int: [String]] = [:]
    }

    /// Plays `operations` on new clients and a new model; returns the first divergence.
    ///
    /// Where calls raced (A4), the model goes on as every one-after-another order of them that
    /// agrees with what the client showed: the candidates; the client diverges when none is left.
    static func run(
        _ operations: [SimulatedOperation], layout: SpecModel.Layout, probesConfigure: Bool = false,
        nestedConfiguresAfterTheLoad: Bool = false, callLimit: TimeInterval = 60, storageFirst: Bool = true,
        coverage: inout SimulationCoverage
    ) async -> Divergence? {
        let world = SimulatedWorld(
            layout: layout, probesConfigure: probesConfigure, nestedConfiguresAfterTheLoad: nestedConfiguresAfterTheLoad,
            callLimit: callLimit, storageFirst: storageFirst)
        var candidates = [SpecModel(layout: layout, storageFirst: storageFirst)]
        var numbers = SimulatedWorld.Numbers()
        var result: Divergence?
        for (index, operation) in operations.enumerated() {
            coverage.operations += 1
            coverage.count(operation)
            let before = numbers
            let effect = await world.perform(operation, numbers: &numbers)
            if let failure = world.failure {
                result = Divergence(operation: index, what: failure)
                break
            }
            var next: [SpecModel] = []
            var differences: [String] = []
            for model in candidates {
                for outcome in apply(operation, to: model, effect: effect, numbers: before, layout: layout) {
                    guard var model = outcome.model else {
                        differences.append(outcome.difference)
                        continue
                    }
                    let observed = await observe(world, expecting: model, settled: effect.settled)
                    if let difference = compare(&model, observed, settled: effect.settled) {
                        differences.append(difference)
                    } else if !next.contains(model) {
                        next.append(model)
                    }
                }
            }
            if trace {
                let model = next.first ?? candidates[0]
                print("TRACE \(index). \(operation)  [t=\(model.now), candidates \(next.count)]")
                print("TRACE   client: \(world.requests.suffix(3)) | \(world.delivered.value.suffix(3)) | \(world.logs.suffix(2))")
                print("TRACE   model:  \(model.requests.suffix(3)) | \(model.deliveries.suffix(3)) | \(model.logs.suffix(2))")
            }
            if next.isEmpty {
                result = Divergence(
                    operation: index,
                    what: differences.count == 1
                        ? differences[0]
                        // (Orders of raced calls, of work due at one moment, or the moments a
                        // `deinit`'s configure may come at.)
                        : "no candidate order agrees:\n" + differences.enumerated().map { "  order \($0.offset + 1): \($0.element)" }.joined(separator: "\n"))
                break
            }
            // Bounded, but wide enough for two races in a row (two orders each, and the orders
            // of their items): a cap of 4 once kept only the forks of the first race's first
            // order, and a later upload that showed the other order diverged from all of them.
            candidates = Array(next.prefix(16))
        }
        coverage.sessions += 1
        coverage.add(candidates[0])
        coverage.probeDeinits += world.probeDeinits.value
        await world.tearDown()
        return result
    }

    /// The candidate models after `operation` (one, or one per order of raced calls): `nil` with
    /// the reason when the model refuses otherwise than the client did.
    private static func apply(
        _ operation: SimulatedOperation, to model: SpecModel, effect: SimulatedWorld.Effect, numbers: SimulatedWorld.Numbers,
        layout: SpecModel.Layout
    ) -> [(model: SpecModel?, difference: String)] {
        var model = model
        var numbers = numbers
        if operation.settlesBefore(layout) { model.settle() }
        var refused: [Bool] = []
        var orders: [SpecModel] = []
        switch operation {
        case .race(let first, let second):
            model.noteRace()
            model.hold()
            var items = [0, 0]
            for (index, call) in [first, second].enumerated() {
                if case .identify = call { numbers.items += 1; items[index] = numbers.items }
                if case .track = call { numbers.items += 1; items[index] = numbers.items }
            }
            var results: [(model: SpecModel?, difference: String)] = []
            for (a, b, itemA, itemB, flip) in [(first, second, items[0], items[1], false), (second, first, items[1], items[0], true)] {
                var order = model
                let refusedA = call(a, item: itemA, on: &order)
                let refusedB = call(b, item: itemB, on: &order)
                let pair = flip ? [refusedB, refusedA] : [refusedA, refusedB]
                // Two items made at once may sit in memory and in the file in either order.
                var orders = [order]
                if itemA > 0, itemB > 0 {
                    for (memory, file) in [(true, false), (false, true), (true, true)] {
                        var swapped = order
                        swapped.reorderRacedItems(itemA, itemB, memory: memory, file: file)
                        orders.append(swapped)
                    }
                }
                for index in orders.indices {
                    for integration in effect.nestedConfigures { orders[index].configure(integration) }
                    if effect.settled { orders[index].settle() }
                }
                // An identify whose update is written while the raced anonymize replaces the
                // customer: queued first, merged into nothing.
                if case .identify(let id) = a, b == .anonymize {
                    var overtaken = model
                    if overtaken.identifyOvertakenByAnonymize(id, item: itemA) == !refusedA {
                        _ = call(b, item: itemB, on: &overtaken)
                        for integration in effect.nestedConfigures { overtaken.configure(integration) }
                        if effect.settled { overtaken.settle() }
                        orders.append(overtaken)
                    }
                }
                if pair == effect.refused {
                    results += orders.map { ($0, "") }
                } else {
                    results.append((nil, "the raced calls were refused \(effect.refused); in the order \(flip ? "second, first" : "first, second") the model says \(pair)"))
                }
            }
            return results
        case .configure, .stop, .anonymize, .identify, .track, .setMode:
            if case .identify = operation { numbers.items += 1 }
            if case .track = operation { numbers.items += 1 }
            refused = [call(operation, item: numbers.items, on: &model)]
        case .addListener(let category, let includeFirstLoad):
            model.addListener(id: numbers.listeners + 1, category: category, includeFirstLoad: includeFirstLoad)
        case .addOwnedListener(let category):
            model.addListener(id: numbers.listeners + 1, category: category, includeFirstLoad: false)
        case .openStream(let category, let includeFirstLoad):
            model.addListener(id: numbers.listeners + 1, category: category, includeFirstLoad: includeFirstLoad, observer: .stream)
        case .addModel(let categories):
            var unique: [String] = []
            for category in categories where !unique.contains(category) { unique.append(category) }
            for (offset, category) in unique.enumerated() {
                model.addListener(id: numbers.listeners + 1 + offset, category: category, includeFirstLoad: true, observer: .model)
            }
        case .releaseOwner, .removeListener, .endStream, .releaseModel:
            for id in effect.removed { model.removeListener(id: id) }
        case .read(let category, let force): _ = model.read(category: category, force: force)
        case .flush: model.flush(id: numbers.flushes + 1)
        case .lifecycle(let event): model.lifecycle(event)
        case .expireBackgroundTime: model.expireBackgroundTime()
        case .networkPath(let usable): model.networkPath(usable: usable)
        case .serverAnswers(let integration, let who, let segments): model.servers[integration]?.answers[who] = segments
        case .serverFailsNextFetch(let integration, let failure): model.servers[integration]?.failNextFetches.append(failure)
        case .serverFailsNextLink(let integration, let failure): model.servers[integration]?.failNextLinks.append(failure)
        case .serverFailsNextUploads(let integration, let failure, let times):
            model.servers[integration]?.failNextUploads += Array(repeating: failure, count: times)
        case .advance(let seconds):
            // Work due at one moment may run in any order: one candidate per order.
            return model.advanced(to: model.now + seconds).map { ($0, "") }
        case .moveWallClock(let seconds): model.moveWallClock(by: seconds)
        case .hold: model.hold()
        case .settle: break
        case .stopAndDeleteData: refused = [model.stopAndDeleteData()]
        case .restart(let stopFirst):
            if stopFirst { model.stop() }
            model.restart()
        case .handOver(let integration):
            refused = [model.handOver(integration, mode: nil)]
        case .protectedLaunch(let integration, let calls):
            model.stop()
            model.restart()
            model.hold()
            model.configureWhileProtected(integration, mode: nil)
            refused = [false]
            for inner in calls {
                switch inner {
                case .addListener(let category, let includeFirstLoad):
                    numbers.listeners += 1
                    model.addListener(id: numbers.listeners, category: category, includeFirstLoad: includeFirstLoad)
                    refused.append(false)
                case .read(let category, let force):
                    _ = model.read(category: category, force: force)
                    refused.append(false)
                default:
                    if case .identify = inner { numbers.items += 1 }
                    if case .track = inner { numbers.items += 1 }
                    refused.append(call(inner, item: numbers.items, on: &model))
                }
            }
            model.settleLoading()
            model.protectedDataBecameAvailable()
        }
        if effect.settled {
            // An app object's `deinit` runs when the SDK lets go of its last reference (D7
            // promises no moment): each moment of the call's queued work it may have come at is
            // a candidate (``SpecModel/settled(configuring:afterTheLoad:)``).
            orders += model.settled(configuring: effect.nestedConfigures, afterTheLoad: effect.nestedAfterTheLoad)
        } else {
            // The queued work waits: the configures come before any of it.
            for integration in effect.nestedConfigures { model.configure(integration) }
            orders.append(model)
        }
        if refused != effect.refused {
            return [(nil, "the call was refused: \(effect.refused); the model says \(refused)")]
        }
        return orders.map { ($0, "") }
    }

    /// A lifecycle call (or tracking) on the model; returns whether it is refused.
    private static func call(_ operation: SimulatedOperation, item: Int, on model: inout SpecModel) -> Bool {
        switch operation {
        case .configure(let integration, let mode):
            model.configure(integration, mode: mode)
            return false
        case .stop:
            model.stop()
            return false
        case .anonymize:
            model.anonymize()
            return false
        case .identify(let id): return !model.identify(id, item: item)
        case .track: return !model.track(item: item)
        case .setMode(let mode):
            model.setMode(mode)
            return false
        default: preconditionFailure("\(operation) is not a lifecycle call")
        }
    }

    /// What the world shows; with `settled`, all of it, waiting (bounded) for streams to catch up
    /// with what `model` says they were told.
    private static func observe(_ world: SimulatedWorld, expecting model: SpecModel, settled: Bool) async -> Observed {
        var observed = Observed()
        observed.customer = world.customer(world.client.customerIds)
        observed.configured = world.client.isConfigured
        guard settled else { return observed }
        observed.deliveries = world.delivered.value
        observed.requests = world.requests
        observed.logs = world.logs
        observed.queuedCount = world.client.queuedEventCount
        observed.listenerCount = world.client.listenerCount
        observed.backgroundTime = world.backgroundTime
        var expected: [Int: (last: [String]?, finished: Bool)] = [:]
        for (id, values) in model.streamValues { expected[id] = (values.last, model.finishedStreams.contains(id)) }
        observed.streams = world.streamRecords(expecting: expected)
        observed.modelLists = await world.modelLists()
        return observed
    }

    /// The first difference between the model and what the world showed.
    private static func compare(_ model: inout SpecModel, _ observed: Observed, settled: Bool) -> String? {
        if !model.matches(observed.customer, model.customer) {
            return "the customer is \(describe(observed.customer)); the model says \(describe(model.customer))"
        }
        guard settled else { return nil }
        if observed.configured != model.isConfigured {
            return "isConfigured is \(observed.configured); the model says \(model.isConfigured)"
        }
        if let difference = firstDifference("delivery queue", client: observed.deliveries, model: model.deliveries) {
            return difference
        }
        let seen = SpecModel.Request.canonical(observed.requests)
        let expected = SpecModel.Request.canonical(model.requests)
        if let index = seen.indices.first(where: { $0 >= expected.count || !model.matches(seen[$0], expected[$0]) })
            ?? (seen.count < expected.count ? seen.count : nil)
        {
            func entry(_ list: [SpecModel.Request]) -> String { index < list.count ? list[index].description : "nothing" }
            let context = expected.prefix(index).suffix(4).map { "    \($0)" }.joined(separator: "\n")
            let full =
                seen.count + expected.count <= 16
                ? "\n  the client's: \(seen.map(\.description).joined(separator: "; "))\n  the model's: \(expected.map(\.description).joined(separator: "; "))"
                : ""
            return """
                server requests differ at entry \(index): the client has \(entry(seen)); the model has \(entry(expected))
                  (client \(seen.count) entries, model \(expected.count); the client's cookies are numbered in the order it
                  showed them; the entries before, which agree:
                \(context))\(full)
                """
        }
        if let difference = firstDifference(
            "log lines", client: SpecModel.LogLine.canonical(observed.logs), model: SpecModel.LogLine.canonical(model.logs))
        {
            return difference
        }
        if observed.queuedCount != model.queuedCount {
            return "queuedEventCount is \(observed.queuedCount); the model has \(model.queuedCount) items queued (E3, E4)"
        }
        if observed.listenerCount != model.listenerCount {
            return "listenerCount is \(observed.listenerCount); the model has \(model.listenerCount) listeners (M4, A3, M5)"
        }
        let background = observed.backgroundTime.map { "\($0.ended ? "ended" : "open")\($0.expired ? " (expired)" : "")" }
        let expectedBackground = model.backgroundTime.map { "\($0.ended ? "ended" : "open")\($0.expired ? " (expired)" : "")" }
        if background != expectedBackground {
            return "the requests for background time are \(background); the model says \(expectedBackground) (E7)"
        }
        for (id, stream) in observed.streams.sorted(by: { $0.key < $1.key }) {
            let told = model.streamValues[id] ?? []
            let finished = model.finishedStreams.contains(id)
            if stream.finished != finished {
                return "stream #\(id) is \(stream.finished ? "" : "not ")finished; the model says it is\(finished ? "" : " not") (M5 rev 4, M4)"
            }
            // An `AsyncStream` keeping the newest element may skip lists the consumer was slow to take.
            if stream.values.last != told.last || !isSubsequence(stream.values, of: told) {
                return "stream #\(id) received \(stream.values); the model told it \(told) (M4)"
            }
        }
        for (id, list) in observed.modelLists.sorted(by: { $0.key < $1.key }) {
            let expected = model.modelList(listener: id)
            if list.sorted() != expected {
                return "the SegmentsModel category of listener #\(id) shows \(list); the model says \(expected) (M5)"
            }
        }
        return nil
    }

    private static func isSubsequence(_ values: [[String]], of told: [[String]]) -> Bool {
        var index = told.startIndex
        for value in values {
            guard let found = told[index...].firstIndex(of: value) else { return false }
            index = found + 1
        }
        return true
    }

    /// The shortest list of operations (removing chunks, then single ones, then the calls inside
    /// races and launches) that still diverges.
    static func shrink(
        _ operations: [SimulatedOperation], layout: SpecModel.Layout, probesConfigure: Bool = false,
        nestedConfiguresAfterTheLoad: Bool = false, storageFirst: Bool = true, divergingAt index: Int
    ) async -> [SimulatedOperation] {
        var scratch = SimulationCoverage()
        var shortest = Array(operations.prefix(index + 1))
        // Only a divergence of the same kind counts, so the shrinking does not wander off to
        // another one (a trigger left out of the campaign, say).
        let kind = await run(
            shortest, layout: layout, probesConfigure: probesConfigure, nestedConfiguresAfterTheLoad: nestedConfiguresAfterTheLoad,
            storageFirst: storageFirst, coverage: &scratch
        ).map(\.kind)
        func diverges(_ candidate: [SimulatedOperation]) async -> Divergence? {
            guard
                let divergence = await run(
                    candidate, layout: layout, probesConfigure: probesConfigure,
                    nestedConfiguresAfterTheLoad: nestedConfiguresAfterTheLoad, storageFirst: storageFirst, coverage: &scratch),
                kind == nil || divergence.kind == kind
            else { return nil }
            return divergence
        }
        var chunk = max(shortest.count / 2, 1)
        while true {
            var start = 0
            var removedAny = false
            while start < shortest.count {
                var candidate = shortest
                candidate.removeSubrange(start..<min(start + chunk, shortest.count))
                if let divergence = await diverges(candidate) {
                    shortest = Array(candidate.prefix(divergence.operation + 1))
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removedAny { break }
            if !removedAny { chunk = max(chunk / 2, 1) }
        }
        // Simpler forms of single operations: a race as its two calls in a row, a launch's calls
        // fewer.
        var changed = true
        while changed {
            changed = false
            for position in shortest.indices {
                for simpler in simplifications(of: shortest[position]) {
                    var candidate = shortest
                    candidate.replaceSubrange(position...position, with: simpler)
                    if let divergence = await diverges(candidate) {
                        shortest = Array(candidate.prefix(divergence.operation + 1))
                        changed = true
                        break
                    }
                }
                if changed { break }
            }
        }
        return shortest
    }

    private static func simplifications(of operation: SimulatedOperation) -> [[SimulatedOperation]] {
        switch operation {
        case .race(let first, let second): [[first, second], [second, first], [first], [second]]
        case .protectedLaunch(let integration, let calls):
            calls.indices.map { index in
                var fewer = calls
                fewer.remove(at: index)
                return [.protectedLaunch(integration, fewer)]
            }
        case .configure(let integration, .some): [[.configure(integration)]]
        case .serverFailsNextUploads(let integration, let failure, let times) where times > 1:
            [[.serverFailsNextUploads(integration, failure, times: times - 1)]]
        default: []
        }
    }

    private static func describe(_ customer: SpecModel.Customer?) -> String {
        customer.map(\.description) ?? "none (not configured)"
    }

    private static func firstDifference<T: Equatable & CustomStringConvertible>(_ what: String, client: [T], model: [T]) -> String? {
        guard client != model else { return nil }
        let index = zip(client, model).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(client.count, model.count)
        func entry(_ list: [T]) -> String { index < list.count ? list[index].description : "nothing" }
        let context = model.prefix(index).suffix(4).map { "    \($0)" }.joined(separator: "\n")
        return """
            \(what) differ at entry \(index): the client has \(entry(client)); the model has \(entry(model))
              (client \(client.count) entries, model \(model.count); the entries before, which agree:
            \(context))
            """
    }
}

/// The deterministic simulation (issues 21 and 32): random sessions of configure (integrations
/// A and B, naming a flushing mode or not), stop, anonymize, identify, listeners (with and without
/// includeFirstLoad, tied to an owner, `changes(of:)` streams, `SegmentsModel`s), tracking,
/// one-shot reads, all four flushing modes, flushes and their results, app lifecycle events and
/// background time, server answers that change, fetches, links and uploads that fail (transient,
/// permanent, 401/403, with `Retry-After`), time passing and the wall clock set; calls made while
/// queued work waits and lifecycle calls raced on two threads; restarts over the same stores,
/// hand-overs of a folder between two clients, launches before the first unlock; app objects
/// whose `deinit` calls the SDK — on the real `SegmentsClient`s with the shipped fakes on
/// virtual time, compared after every operation with ``SpecModel``.
///
/// `SIMULATION_SESSIONS`, `SIMULATION_LENGTH`, `SIMULATION_SEED` and
/// `SIMULATION_EXCLUDED_FINDINGS` change the campaign (`Scripts/simulate.sh`). A divergence
/// prints its seed and a shrunk list of operations.
@Suite(Hang.timeLimit(minutes: 10)) struct SpecSimulationTests {
    static let environment = ProcessInfo.processInfo.environment
    static let defaultSessions = 2_000
    static let sessions = Int(environment["SIMULATION_SESSIONS"] ?? "") ?? defaultSessions
    static let length = Int(environment["SIMULATION_LENGTH"] ?? "") ?? 60
    static let seed = UInt64(environment["SIMULATION_SEED"] ?? "") ?? 21

    // The campaign blocks its thread (bounded waits for the queues) on a loaded CI machine: on a
    // thread of its own, it leaves the cooperative pool to the other suites.
    @Test(.onDedicatedThread) func tcdgaemp_randomSessionsOfTheRealClientMatchTheSpecModel() async {
        var coverage = SimulationCoverage()
        let excluded = SimulationKnownDefects.excluded
        let started = Date()
        for session in 0..<Self.sessions {
            let seed = Self.seed &+ UInt64(session)
            var generator = SessionGenerator(seed: seed, excluded: excluded)
            let operations = generator.session(length: Self.length)
            for feature in generator.profile.description.split(separator: ",") {
                coverage.profiles[feature.trimmingCharacters(in: .whitespaces), default: 0] += 1
            }
            let probesConfigure = !excluded.contains(1)
            // Finding 1's configures from a `deinit`: in every other session the world pins them
            // after the load, where they show (a configure dropped diverges), in the others they
            // come when the threads make them. From the seed, not the generator: the sessions
            // stay those of the seed.
            let pinned = probesConfigure && seed % 2 == 0
            let storageFirst = generator.profile.storageFirst
            guard
                let divergence = await Simulation.run(
                    operations, layout: generator.layout, probesConfigure: probesConfigure, nestedConfiguresAfterTheLoad: pinned,
                    storageFirst: storageFirst, coverage: &coverage)
            else { continue }
            let shrunk = await Simulation.shrink(
                operations, layout: generator.layout, probesConfigure: probesConfigure, nestedConfiguresAfterTheLoad: pinned,
                storageFirst: storageFirst, divergingAt: divergence.operation)
            var scratch = SimulationCoverage()
            let shrunkDivergence = await Simulation.run(
                shrunk, layout: generator.layout, probesConfigure: probesConfigure, nestedConfiguresAfterTheLoad: pinned,
                storageFirst: storageFirst, coverage: &scratch)
            Issue.record(
                """
                The client and the SPEC model diverge in session seed \(seed) (session \(session + 1) of the \
                campaign; replay: Scripts/simulate.sh --sessions 1 --seed \(seed) --length \(Self.length) \
                --excluded-findings "\(excluded.sorted().map(String.init).joined(separator: ","))")
                \(divergence)
                Session: \(generator.profile). Shrunk to \(shrunk.count) operations:
                \(shrunk.enumerated().map { "  \($0.offset). \($0.element)" }.joined(separator: "\n"))
                which diverge \(shrunkDivergence.map(\.description) ?? "(no longer)")
                """)
            return
        }
        print("simulation: \(coverage)\n  in \(Int(Date().timeIntervalSince(started))) s, known defects left out: \(excluded.sorted())")
        // The campaign was not hollow: every kind of operation and outcome happened, many times.
        #expect(coverage.sessions == Self.sessions)
        #expect(coverage.operations == Self.sessions * Self.length)
        if Self.environment["SIMULATION_SESSIONS"] == nil {
            #expect(coverage.sessions >= 2_000, "a CI run drives at least 2,000 sessions (issue 32)")
        }
        guard Self.sessions >= Self.defaultSessions else { return }
        let scale = Self.sessions * Self.length / 1_000
        #expect(coverage.listenerCalls > scale)
        #expect(coverage.fetches > scale)
        #expect(coverage.links > 0)
        #expect(coverage.uploads[200, default: 0] > scale)
        for status in [400, 401, 403, 429, 500, 503] {
            #expect(coverage.uploads[status, default: 0] > 0, "no upload was answered \(status)")
        }
        for kind in ["segments", "httpStatus", "linkFailed", "stopped", "network"] {
            #expect(coverage.answers[kind, default: 0] > 0, "no read was answered with \(kind)")
        }
        for kind in ["uploaded", "httpStatus", "unauthorized", "notConfigured", "network"] {
            #expect(coverage.flushResults[kind, default: 0] > 0, "no flush reported \(kind)")
        }
        // Every new kind of operation was applied, many times (issue 32).
        let minimum = Self.sessions / 20
        for kind in [
            "hold", "settle", "race", "restart after stop", "restart by release", "handOver", "protectedLaunch", "addOwnedListener",
            "releaseOwner", "openStream", "endStream", "addModel", "releaseModel", "flush", "expireBackgroundTime",
            "lifecycle(willResignActive)", "lifecycle(didEnterBackground)", "lifecycle(willEnterForeground)",
            "lifecycle(didBecomeActive)", "setMode(immediate)", "setMode(periodic)", "setMode(automatic)", "setMode(manual)",
            "serverFailsNextUploads(transient)", "serverFailsNextUploads(permanent)", "serverFailsNextUploads(401/403)",
            "path offline", "path online",
        ] {
            #expect(coverage.kinds[kind, default: 0] >= minimum, "the campaign applied \(kind) \(coverage.kinds[kind, default: 0]) times")
        }
        #expect(coverage.probeDeinits >= minimum, "app objects whose deinit calls the SDK were released \(coverage.probeDeinits) times")
        if !excluded.contains(1) {
            // Finding 1's configures from a `deinit`, pinned after the load in even seeds: about
            // 670 in 2,000 sessions (about 200 when the threads alone place them).
            let afterTheLoad = coverage.applied["D7 configure from a deinit after the load", default: 0]
            #expect(afterTheLoad >= Self.sessions / 5, "a deinit configured after the load \(afterTheLoad) times")
        }
        #expect(coverage.backgroundTimeRequests >= minimum)
        // Every rule with a branch of its own was reached (the default campaign reaches each many
        // times; see the printed counts).
        for rule in SpecModel.rulesWithABranch + SpecModel.extendedRules + SpecModel.networkPathRules {
            #expect(coverage.applied[rule, default: 0] > 0, "the campaign never reached \(rule)")
        }
    }
}

/// Sessions the simulation shrank from defects it found, replayed on every run: each was seen
/// diverging with its defect put back (Docs/Reliability.md, "Deterministic simulation").
// On threads of their own: the world's bounded waits block the thread that waits.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct SimulatedRegressionTests {
    typealias Operation = SimulatedOperation

    private func expectAgreement(
        _ operations: [Operation], layout: SpecModel.Layout = .storagePerProject, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        var coverage = SimulationCoverage()
        let divergence = await Simulation.run(operations, layout: layout, coverage: &coverage)
        #expect(divergence == nil, "\(divergence.map(\.description) ?? "")", sourceLocation: sourceLocation)
        #expect(coverage.operations == operations.count, sourceLocation: sourceLocation)
    }

    /// E4, P5, P8: a client let go of (no stop) while a flush it had begun waits keeps nothing of
    /// its folder alive: its flush is abandoned (the item stays on disk), and the next launch on
    /// the folder, before the first unlock, makes its own customer rather than being handed the
    /// released client's. Found by `Scripts/simulate.sh --seed 5000000` (session 8,407), shrunk
    /// to these 6 operations, while findings 11 and 13 were fixed.
    ///
    /// Once intermittent under ThreadSanitizer (CI's run at `a0711b5`): the launch was handed the
    /// released client's customer (c0+u1), because the world let it go while held and never drained
    /// its storage queue, so its writes could still be queued at the launch (finding 4's rule hands
    /// the folder on then). The world now drains such queues when it settles, as the model assumes;
    /// the old outcome comes back when their resume is delayed past the launch.
    @Test func e4_p8_aClientLetGoWithAFlushBegunLeavesTheNextLaunchItsOwnCustomer() async {
        var coverage = SimulationCoverage()
        let divergence = await Simulation.run(
            [
                .configure(.a), .read(category: "content", force: false), .hold, .identify("u1"), .restart(stopFirst: false),
                .protectedLaunch(.a, [.track]),
            ],
            layout: .files, storageFirst: false, coverage: &coverage)
        #expect(divergence == nil, "\(divergence.map(\.description) ?? "")")
    }

    /// T6: a follow-up owed during a flight is scheduled even when the flight fails for good (404).
    @Test func t6_theReloadOwedDuringAFetchThatGets404IsStillMade() async {
        await expectAgreement([
            .serverFailsNextFetch(.a, .init(status: 404)), .read(category: "merchandising", force: true), .configure(.a),
            .addListener(category: "content", includeFirstLoad: false), .advance(2.5), .advance(4.75),
        ])
    }

    /// A1, D6: anonymize right after configure cancels the first reload and requests one for the
    /// new customer, so the includeFirstLoad promise is kept.
    @Test func a1_d6_anAnonymizeBeforeTheFirstReloadDoesNotStrandIncludeFirstLoad() async {
        await expectAgreement([
            .addListener(category: "discovery", includeFirstLoad: true), .configure(.b), .anonymize, .advance(5.265625),
        ])
    }

    /// D4: project A → B → A, where A's stored baseline already equals A's answer: the listener,
    /// last told B's segments, is told A's.
    @Test func d4_aListenerToldProjectBsSegmentsHearsProjectAsAfterAToBToA() async {
        await expectAgreement([
            .addListener(category: "content", includeFirstLoad: false), .serverAnswers(.b, who: "anonymous", ["content": ["s1"]]),
            .configure(.a), .configure(.b), .advance(70.21875), .configure(.a), .advance(6.40625),
        ])
    }

    // Issue 32: three defects put back on purpose in areas the simulation did not drive before,
    // each found by the default campaign and shrunk to the session below.

    /// E4, P2 (file stores, restarts): the journal's replay took its complete last line for a
    /// line torn by a crash and cut it off at the next start — here the removal of the item just
    /// uploaded, so the item came back and went up twice (an appended item would be lost). Found
    /// at session 17 (seed 37), shrunk from 34 operations to 3 (this 3-operation session is the
    /// one an earlier campaign shrank to: session 60, seed 80).
    @Test func e4_theQueueFilesLastLineSurvivesARestart() async {
        await expectAgreement([.handOver(.a), .track, .protectedLaunch(.a, [])], layout: .files)
    }

    /// E3 (failing uploads): a 403 was taken for a permanent failure: counted against the item,
    /// no backoff, and the next enqueue uploaded the queue at once. Found at session 10 (seed 30),
    /// shrunk from 24 operations to 4.
    @Test func e3_anAuthorizationFailureHoldsTheWholeQueueForABackoff() async {
        await expectAgreement(
            [.serverFailsNextUploads(.b, .init(status: 403), times: 1), .configure(.b), .identify("u1"), .identify("u2")],
            layout: .oneStorage)
    }

    /// E7, E2 (app lifecycle): going to the background flushed in manual mode too. Found at
    /// session 11 (seed 31), shrunk from 51 operations to 4.
    @Test func e7_goingToTheBackgroundInManualModeUploadsNothing() async {
        await expectAgreement([.setMode(.manual), .configure(.b), .track, .lifecycle(.didEnterBackground)], layout: .oneStorage)
    }
}
