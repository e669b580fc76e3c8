// swift-tools-version: 6.1
// RealtimeSegments: real-time customer segments for Swift apps. No package dependencies.
import PackageDescription

let package = Package(
    name: "RealtimeSegments",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "RealtimeSegments", targets: ["RealtimeSegments"]),
        .library(name: "SegmentsTesting", targets: ["SegmentsTesting"]),
        .library(name: "SegmentsEmulator", targets: ["SegmentsEmulator"]),
        .executable(name: "segments", targets: ["segments"]),
        .executable(name: "segments-bench", targets: ["segments-bench"]),
    ],
    targets: [
        // The language: entities, ports, pure policies. Foundation only.
        .target(name: "SegmentsDomain", path: "Sources/Domain"),
        // The working core: segmentation engine, tracking pipeline, live clock and scheduler.
        .target(name: "SegmentsData", dependencies: ["SegmentsDomain"], path: "Sources/Data"),
        // Transport seam, URLSession transport, backend adapters.
        .target(name: "SegmentsNetworking", dependencies: ["SegmentsDomain"], path: "Sources/Networking"),
        // File-backed and in-memory stores.
        .target(name: "SegmentsPersistence", dependencies: ["SegmentsDomain"], path: "Sources/Persistence"),
        // Composition root and the Exponea-compatible facade.
        .target(
            name: "RealtimeSegments",
            dependencies: ["SegmentsDomain", "SegmentsData", "SegmentsNetworking", "SegmentsPersistence"],
            path: "Sources/Facade",
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // Fakes for every boundary, shipped for users' own tests.
        .target(name: "SegmentsTesting", dependencies: ["SegmentsDomain", "SegmentsNetworking"], path: "Sources/Testing"),
        // An independent loopback HTTP peer emulating the backends. Foundation only.
        .target(name: "SegmentsEmulator", path: "Sources/Emulator"),
        // The `segments` commands, a library of no product; the executable is their entry point only.
        .target(name: "SegmentsCommandLine", dependencies: ["RealtimeSegments", "SegmentsEmulator"], path: "Sources/CLI/Commands"),
        .executableTarget(name: "segments", dependencies: ["SegmentsCommandLine"], path: "Sources/CLI/Main"),
        .executableTarget(
            name: "segments-bench",
            // Networking and Persistence: `stack-probe` measures their JSON paths on a 512 KiB stack.
            dependencies: [
                "RealtimeSegments", "SegmentsTesting", "SegmentsEmulator", "SegmentsDomain", "SegmentsNetworking",
                "SegmentsPersistence",
            ],
            path: "Sources/Benchmarks"
        ),

        .testTarget(name: "SegmentsDomainTests", dependencies: ["SegmentsDomain", "SegmentsTesting"]),
        // Persistence: the E4 crash test restarts on a copy of a real journal.
        .testTarget(name: "SegmentsDataTests", dependencies: ["SegmentsData", "SegmentsTesting", "SegmentsPersistence"]),
        .testTarget(name: "SegmentsTestingTests", dependencies: ["SegmentsTesting"]),
        // The test kit under XCTest (SPEC X4): XCTestCase subclasses, run by `swift test` too.
        .testTarget(name: "SegmentsTestingXCTests", dependencies: ["SegmentsTesting", "SegmentsDomain"]),
        .testTarget(name: "SegmentsNetworkingTests", dependencies: ["SegmentsNetworking", "SegmentsTesting", "SegmentsEmulator"]),
        .testTarget(name: "SegmentsPersistenceTests", dependencies: ["SegmentsPersistence", "SegmentsTesting"]),
        // `segments` so the crash test finds the CLI built beside the test bundle. macOS and Linux
        // only: SwiftPM's Xcode build has no command-line tools for iOS, tvOS, watchOS or visionOS,
        // and the tests that start it are compiled only on macOS and Linux (PackageGraphTests).
        .testTarget(
            name: "RealtimeSegmentsTests",
            dependencies: [
                "RealtimeSegments", "SegmentsTesting", "SegmentsEmulator",
                .target(name: "segments", condition: .when(platforms: [.macOS, .linux])),
            ]),
        .testTarget(name: "SegmentsEmulatorTests", dependencies: ["SegmentsEmulator", "SegmentsTesting"]),
        // SPEC X1: Exponea-shaped app code (AppCode/) compiled in Swift 6 language mode, and run
        // against the emulator.
        .testTarget(
            name: "ExponeaCompatibilityTests",
            dependencies: ["RealtimeSegments", "SegmentsTesting", "SegmentsEmulator"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The same app code (AppCode/ is a symlink to the folder above) in Swift 5 language mode.
        .testTarget(
            name: "ExponeaCompatibilitySwift5Tests",
            dependencies: ["RealtimeSegments", "SegmentsTesting"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
