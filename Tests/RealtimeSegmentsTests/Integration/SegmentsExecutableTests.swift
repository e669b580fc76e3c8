#if os(macOS) || os(Linux)  // SegmentsExecutable is built there only

import Foundation
import SegmentsTesting
import Testing

/// `SegmentsExecutable` looks for `segments` in the build products folder of the loaded test
/// image, whatever process runs the tests (`xctest`, `swiftpm-testing-helper`, Xcode).
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentsExecutableTests {
    @Test(arguments: [
        // Linux, SwiftPM: the image is the .xctest executable in the build folder.
        (
            "/w/.build/x86_64-unknown-linux-gnu/debug/RealtimeSegmentsPackageTests.xctest",
            ["/w/.build/x86_64-unknown-linux-gnu/debug"]
        ),
        // macOS, SwiftPM (xctest or swiftpm-testing-helper): the image is inside the bundle.
        (
            "/w/.build/arm64-apple-macosx/debug/RealtimeSegmentsPackageTests.xctest/Contents/MacOS/RealtimeSegmentsPackageTests",
            ["/w/.build/arm64-apple-macosx/debug", "/w/.build/arm64-apple-macosx/debug/RealtimeSegmentsPackageTests.xctest/Contents/MacOS"]
        ),
        // macOS, Xcode: the bundle sits in Build/Products/Debug.
        (
            "/D/Build/Products/Debug/RealtimeSegmentsTests.xctest/Contents/MacOS/RealtimeSegmentsTests",
            ["/D/Build/Products/Debug", "/D/Build/Products/Debug/RealtimeSegmentsTests.xctest/Contents/MacOS"]
        ),
        // A folder named like a bundle inside the bundle: the innermost one counts.
        ("/a.xctest/b/T.xctest/Contents/MacOS/T", ["/a.xctest/b", "/a.xctest/b/T.xctest/Contents/MacOS"]),
        // No .xctest in the path: the image's own folder.
        ("/usr/local/bin/runner", ["/usr/local/bin"]),
    ])
    func theBuildFolderIsFoundFromTheTestImage(imagePath: String, expected: [String]) {
        #expect(SegmentsExecutable.candidateFolders(imagePath: imagePath).map(\.path) == expected)
    }

    /// The image holding this module is found, it is in (or is) a `.xctest`, and `segments` is beside it.
    @Test func theLoadedImageIsTheTestBundle() throws {
        let image = try #require(SegmentsExecutable.loadedImagePath())
        #expect(image.contains(".xctest"), "\(image)")
        // The image alone leads to the built tool (no runner path, no bundle list).
        let folders = SegmentsExecutable.candidateFolders(imagePath: image)
        #expect(folders.contains { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("segments").path) })
    }

    /// `SEGMENTS_EXECUTABLE` wins over every search; without it the search finds the built tool.
    @Test func theEnvironmentVariableComesFirst() throws {
        let chosen = SegmentsExecutable.url(environment: [SegmentsExecutable.environmentVariable: "/opt/tools/segments-1.2"])
        #expect(chosen?.path == "/opt/tools/segments-1.2")
        let found = try #require(SegmentsExecutable.url(environment: [:]))
        #expect(found.lastPathComponent == "segments")
        #expect(FileManager.default.isExecutableFile(atPath: found.path))
    }
}

#endif
