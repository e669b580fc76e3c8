import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsTesting
import Testing

#if os(macOS) || os(Linux)  // starts child processes (`Process`)

/// Behaviour P4 for the `segments` command: keys come from `SEGMENTS_API_KEY` or `--api-key-file`,
/// never from an argument (visible in `ps` and shell history), and `--help` says so.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct CLISecretsTests {
    private struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    private static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let executable = try #require(SegmentsExecutable.url, "the segments executable is not beside the test bundle")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var inherited = ProcessInfo.processInfo.environment
        inherited.removeValue(forKey: "SEGMENTS_API_KEY")
        process.environment = inherited.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }

    @Test func p4_aKeyOnTheCommandLineIsRefusedAndNothingIsSent() throws {
        let emulator = SegmentsEmulator()
        let baseURL = try emulator.start()
        defer { emulator.stop() }

        let run = try Self.run([
            "fetch", "--project-token", "T", "--cookie", "c", "--base-url", baseURL.absoluteString,
            "--authorization", "Token SECRET-KEY",
        ])

        #expect(run.status == 2)
        #expect(run.errors.contains("SEGMENTS_API_KEY"))
        #expect(!run.errors.contains("SECRET-KEY"))
        #expect(emulator.requests.isEmpty)
    }

    @Test func p4_theKeyComesFromTheEnvironment() throws {
        let emulator = SegmentsEmulator()
        emulator.requireAuthorization("Token SECRET-KEY")
        let baseURL = try emulator.start()
        defer { emulator.stop() }

        let run = try Self.run(
            ["fetch", "--project-token", "T", "--cookie", "c", "--base-url", baseURL.absoluteString],
            environment: ["SEGMENTS_API_KEY": "SECRET-KEY"])

        #expect(run.status == 0, "\(run.errors)")
        #expect(emulator.requests.first?.header("Authorization") == "Token SECRET-KEY")
    }

    @Test func p4_theKeyComesFromAFile() throws {
        let emulator = SegmentsEmulator()
        emulator.requireAuthorization("Bearer SECRET-TOKEN")
        let baseURL = try emulator.start()
        defer { emulator.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString)")
        try Data("SECRET-TOKEN\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let run = try Self.run([
            "fetch", "--project-token", "T", "--cookie", "c", "--base-url", baseURL.absoluteString,
            "--authorization", "bearer", "--api-key-file", file.path,
        ])

        #expect(run.status == 0, "\(run.errors)")
        #expect(emulator.requests.first?.header("Authorization") == "Bearer SECRET-TOKEN")
    }

    @Test(arguments: ["fetch", "track"])
    func p4_helpDocumentsWhereKeysComeFrom(command: String) throws {
        let run = try Self.run([command, "--help"])
        #expect(run.status == 0)
        #expect(run.output.contains("SEGMENTS_API_KEY"))
        #expect(run.output.contains("--api-key-file"))
    }
}

#endif
