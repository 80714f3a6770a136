"""Draws on its terminal the way full-screen programs do: sets the window title, clears the screen, saves
the cursor, writes at addressed positions (the last row included), waits while profwrap would update its
progress, restores the cursor and writes there, and switches to the alternate screen and back."""
import sys
import time

w = sys.stdout.write
w("\033]2;tui_draw's own title\007")
w("\033[2J\033[H")
w("line one\r\n")
w("\0337")  # saved: row 2, column 1
w("\033[5;10HHELLO")
w("\033[24;1HBOTTOM ROW")
sys.stdout.flush()
time.sleep(1.3)  # profwrap's progress is refreshed every 500 ms meanwhile
w("\0338X")
w("\033[?1049h\033[HALTERNATE\033[?1049l")
w("\033[10;1Hdone\r\n")
sys.stdout.flush()
