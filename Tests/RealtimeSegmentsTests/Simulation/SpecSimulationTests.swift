import Foundation
import Testing
import SegmentsTesting

/// Where a session's client and the model first disagreed.
struct Divergence: CustomStringConvertible {
    let operation: Int
    let what: String
    var description: String { "after operation \(operation): \(what)" }
}

/// What a session exercised, so a campaign can prove it was not hollow.
struct SimulationCoverage {
    var sessions = 0
    var operations = 0
    var listenerCalls = 0
    var answers: [String: Int] = [:]
    var links = 0
    var fetches = 0
    var uploads = 0
    var applied: [String: Int] = [:]

    mutating func add(_ model: SpecModel) {
        applied.merge(model.applied, uniquingKeysWith: +)
        for delivery in model.deliveries {
            switch delivery {
            case .told: listenerCalls += 1
            case .answered(_, _, .segments): answers["segments", default: 0] += 1
            case .answered(_, _, .error(let code)): answers[code, default: 0] += 1
            }
        }
        for request in model.requests {
            switch request {
            case .link: links += 1
            case .fetch: fetches += 1
            case .upload: uploads += 1
            }
        }
    }
}

/// Runs sessions on the real client and on the model side by side (Docs/Reliability.md,
/// "Deterministic simulation").
enum Simulation {
    /// Plays `operations` on a new client and a new model; returns the first divergence.
    static func run(
        _ operations: [SimulatedOperation], layout: SpecModel.Layout, coverage: inout SimulationCoverage
    ) async -> Divergence? {
        let world = SimulatedWorld(layout: layout)
        var model = SpecModel(layout: layout)
        var listeners = 0
        var reads = 0
        defer {
            coverage.sessions += 1
            coverage.add(model)
            world.client.stop()
        }
        for (index, operation) in operations.enumerated() {
            coverage.operations += 1
            var modelRefused = false
            switch operation {
            case .configure(let integration): model.configure(integration)
            case .stop: model.stop()
            case .anonymize: model.anonymize()
            case .identify(let id): modelRefused = !model.identify(id)
            case .addListener(let category, let includeFirstLoad):
                listeners += 1
                model.addListener(id: listeners, category: category, includeFirstLoad: includeFirstLoad)
            case .removeListener(let number): model.removeListener(id: number)
            case .track: modelRefused = !model.track()
            case .read(let category, let force):
                reads = model.read(category: category, force: force)
            case .setMode(let mode): model.setMode(mode)
            case .flush: model.flush()
            case .serverAnswers(let integration, let who, let segments): model.servers[integration]?.answers[who] = segments
            case .serverFailsNextFetch(let integration, let failure): model.servers[integration]?.failNextFetches.append(failure)
            case .serverFailsNextLink(let integration, let failure): model.servers[integration]?.failNextLinks.append(failure)
            case .advance(let seconds): model.advance(to: model.now + seconds)
            case .moveWallClock(let seconds): model.moveWallClock(by: seconds)
            }
            let refused = await world.perform(operation, listenerNumber: listeners, readNumber: reads)

            let customer = world.customer(world.client.customerIds)
            if customer != model.customer {
                return Divergence(operation: index, what: "the customer is \(describe(customer)); the model says \(describe(model.customer))")
            }
            if refused != modelRefused {
                return Divergence(operation: index, what: "the call was \(refused ? "" : "not ")refused; the model says it is\(modelRefused ? "" : " not")")
            }
            if let difference = firstDifference("delivery queue", client: world.delivered.value, model: model.deliveries) {
                return Divergence(operation: index, what: difference)
            }
            if let difference = firstDifference("server requests", client: world.requests, model: model.requests) {
                return Divergence(operation: index, what: difference)
            }
            if let difference = firstDifference("log lines", client: world.logs, model: model.logs) {
                return Divergence(operation: index, what: difference)
            }
        }
        return nil
    }

    /// The shortest list of operations (removing chunks, then single ones) that still diverges.
    static func shrink(
        _ operations: [SimulatedOperation], layout: SpecModel.Layout, divergingAt index: Int
    ) async -> [SimulatedOperation] {
        var scratch = SimulationCoverage()
        var shortest = Array(operations.prefix(index + 1))
        var chunk = max(shortest.count / 2, 1)
        while true {
            var start = 0
            var removedAny = false
            while start < shortest.count {
                var candidate = shortest
                candidate.removeSubrange(start..<min(start + chunk, shortest.count))
                if let divergence = await run(candidate, layout: layout, coverage: &scratch) {
                    shortest = Array(candidate.prefix(divergence.operation + 1))
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removedAny { return shortest }
            if !removedAny { chunk = max(chunk / 2, 1) }
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

/// The deterministic simulation (issue 21): random sessions of configure (integrations A and
/// B), stop, anonymize, identify, listeners with and without includeFirstLoad, tracking,
/// one-shot reads forced or not, flushing-mode changes, server answers that change, fail
/// (404, 400, 429, 500, 503, with `Retry-After`) or arrive after a customer change, and time
/// passing — on the real `SegmentsClient` with the shipped fakes on virtual time, compared after
/// every operation with ``SpecModel``: every listener call and read answer (with its virtual
/// time, in delivery-queue order), every server request, the customer, and refusals.
///
/// `SIMULATION_SESSIONS`, `SIMULATION_LENGTH` and `SIMULATION_SEED` change the campaign
/// (`Scripts/simulate.sh`). A divergence prints its seed and a shrunk list of operations.
@Suite(Hang.timeLimit(minutes: 10)) struct SpecSimulationTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sessions = Int(environment["SIMULATION_SESSIONS"] ?? "") ?? 2_000
    static let length = Int(environment["SIMULATION_LENGTH"] ?? "") ?? 60
    static let seed = UInt64(environment["SIMULATION_SEED"] ?? "") ?? 21

    // The campaign blocks its thread (`settle()`'s `sync`) for minutes on a loaded CI machine: on a
    // thread of its own, it leaves the cooperative pool to the other suites.
    @Test(.onDedicatedThread) func tcdgae_randomSessionsOfTheRealClientMatchTheSpecModel() async {
        var coverage = SimulationCoverage()
        for session in 0..<Self.sessions {
            let seed = Self.seed &+ UInt64(session)
            var generator = SessionGenerator(seed: seed)
            let operations = generator.session(length: Self.length)
            guard let divergence = await Simulation.run(operations, layout: generator.layout, coverage: &coverage) else { continue }
            let shrunk = await Simulation.shrink(operations, layout: generator.layout, divergingAt: divergence.operation)
            var scratch = SimulationCoverage()
            let shrunkDivergence = await Simulation.run(shrunk, layout: generator.layout, coverage: &scratch)
            Issue.record(
                """
                The client and the SPEC model diverge in session seed \(seed) (session \(session + 1) of the \
                campaign; replay: Scripts/simulate.sh --sessions 1 --seed \(seed) --length \(Self.length))
                \(divergence)
                Storage layout: \(generator.layout). Shrunk to \(shrunk.count) operations:
                \(shrunk.enumerated().map { "  \($0.offset). \($0.element)" }.joined(separator: "\n"))
                which diverge \(shrunkDivergence.map(\.description) ?? "(no longer)")
                """)
            return
        }
        // The campaign was not hollow: every kind of outcome happened, many times.
        #expect(coverage.sessions == Self.sessions)
        #expect(coverage.operations == Self.sessions * Self.length)
        let scale = Self.sessions * Self.length / 1_000
        #expect(coverage.listenerCalls > scale)
        #expect(coverage.fetches > scale)
        #expect(coverage.links > 0)
        #expect(coverage.uploads > 0)
        for kind in ["segments", "httpStatus", "linkFailed", "stopped"] {
            #expect(coverage.answers[kind, default: 0] > 0, "no read was answered with \(kind)")
        }
        if Self.sessions >= 2_000 {
            // Every rule with a branch of its own was reached (the default campaign reaches each
            // many times; see the printed counts).
            for rule in SpecModel.rulesWithABranch {
                #expect(coverage.applied[rule, default: 0] > 0, "the campaign never reached \(rule)")
            }
        }
        print("simulation: \(coverage)")
    }
}

/// Sessions the simulation shrank from defects it found, replayed on every run: each was seen
/// diverging with its defect put back (Docs/Reliability.md, "Deterministic simulation").
@Suite(Hang.timeLimit(minutes: 2)) struct SimulatedRegressionTests {
    typealias Operation = SimulatedOperation

    private func expectAgreement(
        _ operations: [Operation], layout: SpecModel.Layout = .storagePerProject, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        var coverage = SimulationCoverage()
        let divergence = await Simulation.run(operations, layout: layout, coverage: &coverage)
        #expect(divergence == nil, "\(divergence.map(\.description) ?? "")", sourceLocation: sourceLocation)
        #expect(coverage.operations == operations.count, sourceLocation: sourceLocation)
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
}
