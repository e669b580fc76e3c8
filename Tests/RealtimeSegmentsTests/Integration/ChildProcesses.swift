// Child processes of the tests: `Process` exists only on macOS and Linux, so everything that
// starts one is built only there (iOS, tvOS and watchOS simulators build the rest of the target).
#if os(macOS) || os(Linux)

import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsTesting
import Testing

/// Finds the `segments` executable that SwiftPM (or Xcode) built beside the test bundle (the test
/// target depends on it on macOS and Linux), whatever the scratch path and whatever runs the tests:
///
/// 1. `SEGMENTS_EXECUTABLE`, when set: the path of the executable to use.
/// 2. The folder of the test bundle itself, found from this module's image (`dladdr` on
///    `#dsohandle`): on Linux the image is the `.xctest` executable in the build folder; on macOS it
///    is inside `X.xctest/Contents/MacOS/`, and the runner may be `xctest` or, under Swift Testing,
///    `swiftpm-testing-helper`, which `dlopen`s the bundle (so neither `argv[0]` nor
///    `Bundle.allBundles` need name the build folder).
/// 3. `/proc/self/exe`'s folder, the `.xctest` bundles `Bundle.allBundles` lists, and `argv[0]`'s folder.
enum SegmentsExecutable {
    static let environmentVariable = "SEGMENTS_EXECUTABLE"

    static var url: URL? { url(environment: ProcessInfo.processInfo.environment) }

    static func url(environment: [String: String]) -> URL? {
        if let path = environment[environmentVariable], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var folders: [URL] = []
        if let image = loadedImagePath() {
            folders += candidateFolders(imagePath: image)
        }
        // Linux: the test runner is the bundle's own executable, in the build folder.
        if let runner = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            folders.append(URL(fileURLWithPath: runner).deletingLastPathComponent())
        }
        // macOS: `xctest` loads the bundle from the build folder.
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        return folders.map { $0.appendingPathComponent("segments") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The path of the image (executable or loaded bundle) that holds this test module: on Darwin
    /// from an address in it (`#dsohandle`) by `dladdr`, since the runner there may be
    /// `swiftpm-testing-helper`, which loads the bundle; on Linux the test image is the process's
    /// own executable (`/proc/self/exe`). (A `/proc/self/maps` lookup of `#dsohandle` found nothing
    /// under ThreadSanitizer.)
    static func loadedImagePath() -> String? {
        #if canImport(Darwin)
        var info = Dl_info()
        guard dladdr(#dsohandle, &info) != 0, let name = info.dli_fname else { return nil }
        return String(cString: name)
        #else
        return try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #endif
    }

    /// The folders where the build products beside a test image are, nearest first: the folder
    /// holding the innermost `.xctest` of the image's path (Linux: the image is the `.xctest`
    /// itself; macOS: it is `X.xctest/Contents/MacOS/X`), then the image's own folder.
    static func candidateFolders(imagePath: String) -> [URL] {
        let image = URL(fileURLWithPath: imagePath).standardizedFileURL
        var folders: [URL] = []
        var current = image
        while current.path != "/" && !current.path.isEmpty {
            if current.lastPathComponent.hasSuffix(".xctest") {
                folders.append(current.deletingLastPathComponent())
                break
            }
            current = current.deletingLastPathComponent()
        }
        let own = image.deletingLastPathComponent()
        if !folders.contains(own) { folders.append(own) }
        return folders
    }
}

/// One `segments track` process; its standard output is read line by line as it comes.
/// The `segments` executable, an emulator requiring `Token key`, a storage folder, and the
/// arguments of `segments track` against them: what the multi-process tests share.
struct TrackFixture {
    let executable: URL
    let emulator = SegmentsEmulator()
    let storage = TemporaryDirectory()
    let arguments: [String]

    init(projectToken: String) throws {
        executable = try #require(SegmentsExecutable.url, "the segments executable is not beside the test bundle")
        emulator.requireAuthorization("Token key")
        let baseURL = try emulator.start()
        arguments = [
            "track", "--base-url", baseURL.absoluteString, "--project-token", projectToken, "--authorization", "token",
            "--storage", storage.url.path, "--retry", "0.05",
        ]
    }

    func tearDown() {
        emulator.stop()
        storage.remove()
    }
}

final class TrackChild {
    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32)
        case killed
        case other(Int32)

        var description: String {
            switch self {
            case .exited(let code): "exited with \(code)"
            case .killed: "killed"
            case .other(let code): "ended by signal \(code)"
            }
        }
    }

    struct Output {
        var lines: [String]
        var errors: String

        var accepted: [String] { lines.compactMap { $0.hasPrefix("accepted ") ? String($0.dropFirst(9)) : nil } }
        var loaded: Int? { lines.first { $0.hasPrefix("loaded ") }.flatMap { Int($0.dropFirst(7)) } }
    }

    private let process: Process
    private let errorFile: URL
    private let lines = Locked<[String]>([])
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `executable`; the API key reaches it through the environment (see Behaviour P4), never argv.
    init(executable: URL, arguments: [String], apiKey: String = "key") throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["SEGMENTS_API_KEY": apiKey]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("segments-track-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let handle = pipe.fileHandleForReading
        let thread = Thread { [lines, finished] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
            finished.signal()
        }
        thread.start()
    }

    var isRunning: Bool { process.isRunning }

    var acceptedCount: Int { lines.withLock { $0.filter { $0.hasPrefix("accepted ") }.count } }

    /// Kills the process with SIGKILL (unless it already ended) and waits for it.
    func killWithSIGKILL() async throws -> Status {
        if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
        return try await wait()
    }

    /// Waits for the process to end and its output to be read, without blocking a thread of the
    /// concurrency pool for long.
    func wait() async throws -> Status {
        while process.isRunning { try await Task.sleep(nanoseconds: 2_000_000) }
        finished.wait()  // the pipe's end follows the process's at once
        switch process.terminationReason {
        case .exit: return .exited(process.terminationStatus)
        case .uncaughtSignal: return process.terminationStatus == SIGKILL ? .killed : .other(process.terminationStatus)
        @unknown default: return .other(process.terminationStatus)
        }
    }

    /// Everything read so far; complete once ``wait()`` returned.
    func output() -> Output {
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: errorFile)
        return Output(lines: lines.withLock { $0 }, errors: errors)
    }
}

/// Reads lines from a pipe as they come (blocking), for a child process's standard output.
final class LineReader {
    private let handle: FileHandle
    private var pending = Data()

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line, or `nil` at end of stream.
    func next() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            pending.append(chunk)
        }
    }
}

#endif
