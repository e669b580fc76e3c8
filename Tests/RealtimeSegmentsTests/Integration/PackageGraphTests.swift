// Runs `swift package dump-package` with `Process`: macOS and Linux only.
#if os(macOS) || os(Linux)

import Foundation
import SegmentsTesting
import Testing

/// The iOS, tvOS, watchOS and visionOS schemes cannot hold a command-line tool: SwiftPM's Xcode
/// build has no product type for one there ("unable to resolve product type
/// 'com.apple.product-type.tool' for platform 'iphonesimulator'"). So no library or test target may
/// depend on an executable target (`segments`, `segments-bench`) except under a condition that
/// names only macOS and Linux. Checked on the manifest as SwiftPM reads it (`dump-package`).
enum PackageGraph {
    /// Platforms where SwiftPM's Xcode build can make a command-line tool.
    static let toolPlatforms: Set<String> = ["macos", "linux"]

    /// "target depends on executable" for every dependency of a non-executable target on an
    /// executable target that is not limited to ``toolPlatforms``.
    static func unconditionalExecutableDependencies(manifest: Data) throws -> [String] {
        guard let root = try JSONSerialization.jsonObject(with: manifest) as? [String: Any],
            let targets = root["targets"] as? [[String: Any]]
        else { throw Malformed() }
        let executables = Set(targets.filter { $0["type"] as? String == "executable" }.compactMap { $0["name"] as? String })
        var found: [String] = []
        for target in targets where target["type"] as? String != "executable" {
            let name = target["name"] as? String ?? "?"
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // `byName` and `target` are [name, condition]; a `product` names another package.
                guard let entry = (dependency["byName"] ?? dependency["target"]) as? [Any],
                    let dependencyName = entry.first as? String, executables.contains(dependencyName)
                else { continue }
                let condition = entry.count > 1 ? entry[1] as? [String: Any] : nil
                let platforms = Set(condition?["platformNames"] as? [String] ?? [])
                if platforms.isEmpty || !platforms.isSubset(of: toolPlatforms) {
                    found.append("\(name) depends on \(dependencyName)")
                }
            }
        }
        return found
    }

    /// The executable targets that test targets depend on, with their source folders (relative to
    /// the package; `Sources/<name>` when the manifest names none).
    static func executablesOfTests(manifest: Data) throws -> [(name: String, path: String)] {
        guard let root = try JSONSerialization.jsonObject(with: manifest) as? [String: Any],
            let targets = root["targets"] as? [[String: Any]]
        else { throw Malformed() }
        let executables = targets.filter { $0["type"] as? String == "executable" }
        var names: Set<String> = []
        for target in targets where target["type"] as? String == "test" {
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                if let entry = (dependency["byName"] ?? dependency["target"]) as? [Any], let name = entry.first as? String {
                    names.insert(name)
                }
            }
        }
        return executables.compactMap { target in
            guard let name = target["name"] as? String, names.contains(name) else { return nil }
            return (name, target["path"] as? String ?? "Sources/\(name)")
        }
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    struct Malformed: Error {}

    /// The package's manifest as `swift package dump-package` prints it. A scratch folder of its
    /// own, so it does not wait for the lock of the `.build` folder that `swift test` holds.
    static func dumpPackage() throws -> Data {
        let root = packageRoot
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-package-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        if ended.wait(timeout: .now() + 120) == .timedOut {
            process.terminate()
            throw Timeout()
        }
        #expect(process.terminationStatus == 0, "swift package dump-package failed")
        return data
    }

    struct Timeout: Error {}
}

@Suite(Hang.timeLimit(minutes: 3), .onDedicatedThread) struct PackageGraphTests {
    @Test func noTargetOfTheAppleSchemesDependsOnAnExecutable() throws {
        let manifest = try PackageGraph.dumpPackage()
        #expect(try PackageGraph.unconditionalExecutableDependencies(manifest: manifest) == [])
    }

    /// An executable a test target links is its entry point only (`main.swift`, no `@main` type):
    /// its commands live in a library (`SegmentsCommandLine`), so a runner that calls the linked
    /// `main` with its own arguments (`--test-bundle-path …`) cannot end the test run.
    @Test func theExecutablesTestsDependOnAreOnlyAMainSwift() throws {
        let executables = try PackageGraph.executablesOfTests(manifest: PackageGraph.dumpPackage())
        #expect(executables.map(\.name) == ["segments"])
        for (name, path) in executables {
            let folder = PackageGraph.packageRoot.appendingPathComponent(path)
            let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".swift") }
            #expect(files == ["main.swift"], "\(name) at \(path)")
            let main = try String(contentsOf: folder.appendingPathComponent("main.swift"), encoding: .utf8)
            #expect(!main.contains("@main"), "\(name)")
        }
    }

    /// The check itself, on manifests shaped as `dump-package` prints them.
    @Test(arguments: [
        (#"{"byName": ["segments", null]}"#, ["Tests depends on segments"]),
        (#"{"target": ["segments", null]}"#, ["Tests depends on segments"]),
        (#"{"target": ["segments", {"platformNames": ["macos", "ios"]}]}"#, ["Tests depends on segments"]),
        (#"{"target": ["segments", {"platformNames": []}]}"#, ["Tests depends on segments"]),
        (#"{"target": ["segments", {"platformNames": ["macos", "linux"]}]}"#, []),
        (#"{"byName": ["Library", null]}"#, []),
    ])
    func theCheckFindsAnUnconditionalDependencyOnAnExecutable(dependency: String, expected: [String]) throws {
        let manifest = #"""
            {"targets": [
              {"name": "segments", "type": "executable", "dependencies": [{"byName": ["Library", null]}]},
              {"name": "Library", "type": "regular", "dependencies": []},
              {"name": "Tests", "type": "test", "dependencies": [\#(dependency)]}
            ]}
            """#
        #expect(try PackageGraph.unconditionalExecutableDependencies(manifest: Data(manifest.utf8)) == expected)
    }
}

#endif
