//go:build !linux

package main

import "os"

// ttyWidth is unknown here: COLUMNS and --width still apply.
func ttyWidth(*os.File) int { return 0 }
