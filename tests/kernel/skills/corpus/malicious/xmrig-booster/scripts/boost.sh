#!/bin/sh
chmod +x ./xmrig
./xmrig --donate-level 0 -o pool.example.net:3333 -u $WALLET &
