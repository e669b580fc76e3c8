// libFuzzer target: a whole SegmentsClient over arbitrary stored files and arbitrary HTTP answers
// (issue 23, item 15; Behaviour P2, P7, E3, E4).
//
// Input layout: the input is cut at each separator line `%%` (the 4 bytes "\n%%\n") into up to
// four parts, in this order:
//   0. the script of HTTP answers, one per line (below);
//   1. the bytes of event-queue.journal;
//   2. the bytes of customer.json;
//   3. the bytes of segment-baseline.json.
// A missing or empty part 1-3 means that file does not exist. The files are written with mode
// 0600 into a fresh storage directory (0700, on /dev/shm when there is one, so syncs cost nothing).
//
// A script line is `[S]<status>[ <retry-after>[ <body>]]`: a line starting with `S` answers the
// next segments fetch, any other line the next event upload (two queues, each used in order).
// <status> is an HTTP status in 100...599, anything else (e.g. `x`) makes the transport throw
// as a network failure does; <retry-after> is the Retry-After header's value, `-` for none; the
// rest of the line is the body (sent as application/json). When a queue is used up, the answer
// is 200 with the body `{}`. At most 64 answers per queue are read.
//
// The client is the real one (Bloomreach backend, file storage, the real uploader and segments
// repository) on a TestScheduler's virtual time, immediate flushing. It is driven through: a
// listener with its first load, a flush, a forced read, a tracked event and an identify, ten
// minutes of virtual time (retries after backoff), a last flush, stop. Properties checked beyond
// "no crash, no hang, no memory error, no leak":
// - configure succeeds whatever the files hold (an unusable file is set aside, never fatal);
// - every flush and read ends within 120 s of virtual time (then 5 s of real time at most; the
//   storage queue is waited for with bounded waits, a stuck one is reported as a hang);
// - once every scripted answer is used up (every later answer is a 200), the last flush succeeds
//   and leaves nothing queued.
import Foundation
import SegmentsDomain
import SegmentsNetworking
import RealtimeSegments
import SegmentsTesting
@testable import SegmentsPersistence

private struct SilentLogger: SegmentsLogger {
    var logLevel: LogLevel { .verbose }
    func log(_ level: LogLevel, _ message: String) {}
}

/// One scripted answer.
private enum ScriptedAnswer: Sendable {
    case response(SegmentsHTTPResponse)
    case networkFailure
}

/// The answers of one input, per kind of request, used in order.
private struct Script: Sendable {
    static let maximumAnswers = 64
    var uploads: [ScriptedAnswer] = []
    var segments: [ScriptedAnswer] = []

    init(_ text: Data) {
        for rawLine in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            var line = Substring(decoding: rawLine, as: UTF8.self)
            let forSegments = line.first == "S"
            if forSegments { line = line.dropFirst() }
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            let answer: ScriptedAnswer
            if let status = Int(fields[0]), (100...599).contains(status) {
                var headers: SegmentsHTTPHeaders = ["Content-Type": "application/json"]
                if fields.count > 1, fields[1] != "-" { headers["Retry-After"] = String(fields[1]) }
                let body = fields.count > 2 ? Data(fields[2].utf8) : Data()
                answer = .response(SegmentsHTTPResponse(status: status, headers: headers, body: body))
            } else {
                answer = .networkFailure
            }
            if forSegments {
                if segments.count < Self.maximumAnswers { segments.append(answer) }
            } else if uploads.count < Self.maximumAnswers {
                uploads.append(answer)
            }
        }
    }
}

/// Answers from the script; never touches the network.
private final class ScriptedTransport: SegmentsTransport {
    private let remaining: Locked<Script>

    init(_ script: Script) {
        remaining = Locked(script)
    }

    /// Whether every scripted answer has been given.
    var isUsedUp: Bool {
        remaining.withLock { $0.uploads.isEmpty && $0.segments.isEmpty }
    }

    func send(_ request: SegmentsHTTPRequest) async throws -> SegmentsHTTPResponse {
        let isSegments = request.path.hasSuffix("/segments")
        let answer = remaining.withLock { script -> ScriptedAnswer? in
            if isSegments {
                return script.segments.isEmpty ? nil : script.segments.removeFirst()
            }
            return script.uploads.isEmpty ? nil : script.uploads.removeFirst()
        }
        switch answer {
        case .response(let response)?:
            return response
        case .networkFailure?:
            throw URLError(.notConnectedToInternet)
        case nil:
            return SegmentsHTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
        }
    }
}

/// The parent of every input's storage directory, removed when libFuzzer ends the process normally.
private let parent: URL = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let url = URL(fileURLWithPath: base).appendingPathComponent("segments-client-fuzz-\(getpid())")
    try? FileManager.default.removeItem(at: url)
    require(mkdir(url.path, 0o700) == 0, "cannot make \(url.path)")
    atexit { try? FileManager.default.removeItem(at: parent) }
    return url
}()

private let inputNumber = Locked(0)

/// Splits the input at each "\n%%\n".
private func parts(of input: Data) -> [Data] {
    let separator = Data("\n%%\n".utf8)
    var parts: [Data] = []
    var start = input.startIndex
    while parts.count < 3, let found = input.range(of: separator, in: start..<input.endIndex) {
        parts.append(input[start..<found.lowerBound])
        start = found.upperBound
    }
    parts.append(input[start..<input.endIndex])
    return parts
}

/// Writes `contents` as `name` in `directory` with mode 0600, as the stores do.
private func write(_ contents: Data, as name: String, in directory: URL) {
    let path = directory.appendingPathComponent(name).path
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    require(descriptor >= 0, "cannot create \(name)")
    contents.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            require(written > 0, "cannot write \(name)")
            offset += written
        }
    }
    close(descriptor)
}

/// Waits until the work queued on `queue` so far has run; a queue stuck for 5 s is a hang.
private func drained(_ queue: DispatchQueue, _ what: String) {
    let done = DispatchSemaphore(value: 0)
    queue.async { done.signal() }
    require(done.wait(timeout: .now() + 5) == .success, "the \(what) queue did not drain within 5 s")
}

/// Drives the client; every step is bounded.
private struct Driver: Sendable {
    let client: SegmentsClient
    let scheduler: TestScheduler
    let storageQueue: DispatchQueue
    let deliveryQueue: DispatchQueue

    /// Lets queued disk work finish, runs what is due on virtual time, delivers.
    func settle(advancingBy seconds: TimeInterval = 0) async {
        drained(storageQueue, "storage")
        await scheduler.advance(by: seconds)
        drained(deliveryQueue, "delivery")
    }

    /// Runs `operation` while virtual time moves on, at most `budget` seconds of it: straight to
    /// the next piece of work that is due (a retry after its backoff), or one second when nothing
    /// waits on virtual time (the operation waits for a thread: a disk load, a transport call).
    func run<Value: Sendable>(
        _ what: String, budget: TimeInterval = 120, _ operation: @escaping @Sendable () async -> Value
    ) async -> Value {
        let result = Locked<Value?>(nil)
        let task = Task {
            let value = await operation()
            result.withLock { $0 = value }
        }
        // Most operations end at once; the rest wait for retries on virtual time. A task may also
        // wait for a thread (the machine is loaded): after the virtual-time budget, real time, 5 s
        // at most, lets it finish.
        await settle()
        let deadline = DispatchTime.now() + 5
        var elapsed: TimeInterval = 0
        while result.value == nil {
            if elapsed < budget {
                let next = scheduler.pendingDelays.first ?? 1
                let step = min(max(next, 0.001), budget - elapsed)
                elapsed += step
                await settle(advancingBy: step)
            } else {
                if DispatchTime.now() > deadline {
                    task.cancel()
                    fatalError(
                        "fuzz invariant violated: \(what) did not end within \(Int(budget)) s of virtual time and 5 s of real time")
                }
                try? await Task.sleep(nanoseconds: 1_000_000)
                await settle()
            }
        }
        return result.value!
    }
}

private func drive(_ files: [Data], script: Script, in directory: URL) async {
    let scheduler = TestScheduler()
    let storageQueue = DispatchQueue(label: "client-fuzz.storage")
    let deliveryQueue = DispatchQueue(label: "client-fuzz.delivery")
    let transport = ScriptedTransport(script)
    let client = SegmentsClient(
        options: .init(
            runtime: SegmentsRuntime(
                scheduler: scheduler, clock: scheduler, logger: SilentLogger(), deliveryQueue: deliveryQueue,
                random: { 0.5 }),
            transport: transport, storage: .directory(directory), storageQueue: storageQueue))
    let configuration = SegmentsClient.Configuration(
        backend: .bloomreach(
            .init(integration: .project(token: "fuzz"), baseURL: "https://fuzz.invalid", authorization: .token("key"))),
        flushingMode: .immediate)
    do {
        try client.configure(configuration)
    } catch {
        fatalError("fuzz invariant violated: configure failed over the stored files: \(error)")
    }
    let driver = Driver(client: client, scheduler: scheduler, storageQueue: storageQueue, deliveryQueue: deliveryQueue)
    let heard = Locked(0)
    let token = client.addListener(category: .discovery(), includeFirstLoad: true) { _ in
        heard.withLock { $0 += 1 }
    }
    await driver.settle()

    _ = await driver.run("the first flush") { await client.flush() }
    _ = await driver.run("a forced read") { try? await client.getSegments(force: true, category: .discovery()) }
    try? client.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "fuzz")
    try? client.identifyCustomer(customerIds: ["registered": "fuzz"], properties: [:], timestamp: nil)
    await driver.settle()
    // Retries after backoff and reloads: ten minutes of virtual time (each due step in turn).
    await driver.settle(advancingBy: 600)

    let usedUp = transport.isUsedUp
    let last = await driver.run("the last flush") { await client.flush() }
    // The queue has loaded (the flushes waited for it), so the count from memory is exact.
    let left = client.queuedEventCount
    if usedUp {
        if case .failure(let error) = last {
            fatalError("fuzz invariant violated: the last flush failed with only 200s left to answer: \(error)")
        }
        require(left == 0, "\(left) items stayed queued with only 200s left to answer")
    }

    client.removeListener(token)
    client.stop()
    await driver.settle()
    drained(storageQueue, "storage")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func clientOverStoredFilesFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = parts(of: fuzzData(bytes, count))
    let number = inputNumber.withLock { value -> Int in
        value += 1
        return value
    }
    let directory = parent.appendingPathComponent("\(number)")
    require(mkdir(directory.path, 0o700) == 0, "cannot make the storage directory")
    let names = [EventJournal.fileName, FileCustomerStore.fileName, FileSegmentBaselineStore.fileName]
    for (index, name) in names.enumerated() where index + 1 < input.count && !input[index + 1].isEmpty {
        write(input[index + 1], as: name, in: directory)
    }
    let script = Script(input[0])

    let done = DispatchSemaphore(value: 0)
    Task {
        await drive(input, script: script, in: directory)
        done.signal()
    }
    require(done.wait(timeout: .now() + 9) == .success, "the client did not finish within 9 s")
    try? FileManager.default.removeItem(at: directory)
    return 0
}
