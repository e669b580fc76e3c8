// The transport seam and backend adapters arrive with the networking issue (#3).
import SegmentsDomain
