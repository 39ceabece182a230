package slot

import "strings"

// Of is the Redis Cluster hash slot of key (0..16383), as CLUSTER KEYSLOT computes it.
func Of(key string) int { return int(crc16(HashTag(key)) % 16384) }

// HashTag is the part of key that Redis Cluster hashes: the text between the first "{" and
// the next "}" when not empty, else the whole key.
func HashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
