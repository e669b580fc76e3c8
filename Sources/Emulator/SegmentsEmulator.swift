// The loopback backend emulator arrives with the networking issue (#3).
import Foundation
