import Foundation

#if canImport(Testing)
    import Testing
#endif
#if canImport(XCTest)
    // Only where the toolchain has XCTest (Linux, and Apple test builds): a Swift Testing target
    // builds without it, and on an Apple target without XCTest the kit reports to Swift Testing
    // and standard error only.
    import XCTest
#endif

/// The test framework whose test a double of the kit was made in, so a failure it reports later
/// (often on one of the SDK's threads, where no test is current) goes to that framework.
enum TestFramework: Sendable {
    case swiftTesting
    case xcTest
    case neither

    /// The framework of the test running now: Swift Testing when its `Test.current` is set (it
    /// is, on the test's own task), else XCTest where the toolchain has it (an XCTest test method
    /// runs with no Swift Testing test current), else neither.
    static var current: TestFramework {
        #if canImport(Testing)
            if Test.current != nil { return .swiftTesting }
        #endif
        #if canImport(XCTest)
            return .xcTest
        #else
            return .neither
        #endif
    }
}

/// A place in a test's source: where a double was made, the line a failure points to.
struct TestSourceSite: Sendable {
    let fileID: StaticString
    let filePath: StaticString
    let line: UInt
    let column: UInt
    /// The framework of the test that was running where the site was captured.
    let framework: TestFramework

    init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
        framework = TestFramework.current
    }

    /// Fails the running test at this site with `message` (SPEC X4): a Swift Testing issue when
    /// a Swift Testing test is current or the site was captured in one; otherwise an XCTest
    /// failure (`XCTFail(_:file:line:)`), which XCTest records against the XCTest test running
    /// now, from any thread; with neither framework, a line on standard error.
    ///
    /// With `warningUnderSwiftTesting`, the Swift Testing issue is a warning (toolchains from
    /// Swift 6.3 on; earlier ones record nothing): it tells, and a test that goes on to pass
    /// still passes.
    func fail(_ message: String, warningUnderSwiftTesting: Bool = false) {
        #if canImport(Testing)
            if Test.current != nil || framework == .swiftTesting {
                let location = SourceLocation(
                    fileID: "\(fileID)", filePath: "\(filePath)", line: Int(line), column: Int(column))
                if warningUnderSwiftTesting {
                    #if compiler(>=6.3)
                        Issue.record(Comment(rawValue: message), severity: .warning, sourceLocation: location)
                    #endif
                } else {
                    Issue.record(Comment(rawValue: message), sourceLocation: location)
                }
                return
            }
        #endif
        #if canImport(XCTest)
            XCTFail(message, file: filePath, line: line)
        #else
            FileHandle.standardError.write(Data((message + "\n").utf8))
        #endif
    }
}
